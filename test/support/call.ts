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

export async function call(app: { request(path: string, init?: RequestInit): Response | Promise<Response> }, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await app.request(path, { method, body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, text, body: parsed, headers: res.headers };
}
