/**
 * One-off HTTP requests from the bench process, on `node:http` with a fresh
 * connection each time (`agent: false`): no pooled socket, and none of the
 * lazy loading that the first global `fetch()` call pays, can leak into a
 * measured interval.
 */
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/** GET `url`; resolves with status, headers and the whole body as a Buffer. */
export function get(url) {
  return send(url);
}

/** One request (`method`, `headers`, string `body`); resolves like `get`. */
export function send(url, { method = "GET", headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (response) => {
      const chunks = [];
      response.on("data", (chunk) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * GET `url` until it answers 200. Refused connections and non-200 answers
 * (e.g. 503 "not ready yet") are retried after 1 ms, so the poll adds at most
 * about a millisecond to the time it measures.
 */
export async function pollUntilOk(url, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  let last = "no attempt";
  while (performance.now() < deadline) {
    try {
      const response = await get(url);
      if (response.status === 200) return response;
      last = `status ${response.status}`;
    } catch (error) {
      last = error.code ?? error.message;
    }
    await sleep(1);
  }
  throw new Error(`GET ${url} did not answer 200 within ${timeoutMs} ms (last: ${last})`);
}

/** Opens `count` GET streams to `url` that are never read (each resolves once its headers came); returns their sockets to destroy later. */
export async function openUnread(url, count) {
  const sockets = [];
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve) => {
          const req = request(url, { agent: false }, (res) => {
            res.pause(); // never read
            sockets.push(res.socket);
            resolve();
          });
          req.on("error", resolve);
          req.end();
        }),
    ),
  );
  return sockets;
}
