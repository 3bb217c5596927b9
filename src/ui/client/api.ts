/**
 * Requests to standin: the control token (from `#token=…` in the address,
 * kept for the tab's session, or typed in when asked) goes with each one as
 * a bearer header; the change stream is read with fetch (EventSource cannot
 * send a header).
 */
const TOKEN_KEY = "standin.controlToken";
export const BASE = "/_standin";

export class Unauthorized extends Error {}

export function takeTokenFromAddress(): void {
  const match = /(?:^#|&)token=([^&]*)/.exec(location.hash);
  if (!match) return;
  sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(match[1]!));
  history.replaceState(null, "", location.pathname + location.search);
}

export function setToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

export async function call<T>(method: string, path: string, body?: unknown, raw = false): Promise<T> {
  const init: RequestInit = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = raw ? (body as string) : JSON.stringify(body);
  const response = await fetch(BASE + path, init);
  if (response.status === 401) throw new Unauthorized("the control API needs the control token");
  const answer = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(answer.error ?? `HTTP ${response.status}`);
  return answer;
}

export const get = <T>(path: string) => call<T>("GET", path);
export const post = <T>(path: string, body: unknown = {}) => call<T>("POST", path, body);

/** Reads `/ui/api/stream` and calls `onChange` with each event's data; reconnects when the stream ends (standin restarted). */
export async function follow(onChange: (data: unknown) => void, onState: (connected: boolean) => void): Promise<void> {
  for (;;) {
    try {
      const response = await fetch(`${BASE}/ui/api/stream`, { headers: headers() });
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      onState(true);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          if (data) onChange(JSON.parse(data));
        }
      }
    } catch {
      // Fall through to a reconnect.
    }
    onState(false);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
