/**
 * One request to a service app (in process) with its answer read: status,
 * text, the JSON it parses to (undefined when it is not JSON), headers.
 */
export interface Answer {
  status: number;
  text: string;
  body: any;
  headers: Headers;
}

export async function call(
  app: { request(path: string, init?: RequestInit): Response | Promise<Response> },
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Answer> {
  const res = await app.request(path, { method, headers, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed, headers: res.headers };
}

/** A scheduler request, with an ACL token when one is given. */
export function callScheduler(emu: { scheduler: Parameters<typeof call>[0] }, method: string, path: string, body?: unknown, token?: string): Promise<Answer> {
  return call(emu.scheduler, method, path, body, token ? { "X-Nomad-Token": token } : undefined);
}

/** What `send` gives back: the answer as text, not parsed. */
export interface TextAnswer {
  status: number;
  text: string;
  headers: Headers;
}

export interface SendInit {
  method?: string;
  body?: string;
  headers?: Record<string, string>;
}

/** One request with the body sent as given (GET when no method). */
export async function send(app: { request(path: string, init?: RequestInit): Response | Promise<Response> }, path: string, init: SendInit = {}): Promise<TextAnswer> {
  const requestInit: RequestInit = { method: init.method ?? "GET" };
  if (init.body !== undefined) requestInit.body = init.body;
  if (init.headers) requestInit.headers = init.headers;
  const res = await app.request(path, requestInit);
  return { status: res.status, text: await res.text(), headers: res.headers };
}
