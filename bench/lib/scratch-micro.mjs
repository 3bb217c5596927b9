import { getRequestListener } from "@hono/node-server"; getRequestListener(() => new Response("x"));
import { parseJsonBody, expressJson } from "../../dist/echo/backend.js";
import { noteIncoming } from "../../dist/http/known-bodies.js";
import { requestUrl } from "../../dist/http/routing.js";
import { unemulatedEchoRoute } from "../../dist/echo/catalog.js";
const bytes = Buffer.from('{"message":"hi"}');
const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
const raw = ["Host", "127.0.0.1:1", "Content-Type", "application/json", "Content-Length", "16"];
function req() { const r = new Request("http://127.0.0.1:1/echo?key=test-api-key", { method: "POST" }); noteIncoming(r, { rawHeaders: raw }); return r; }
const N = 200000;
async function time(label, fn) {
  for (let i = 0; i < 20000; i++) await fn(i);
  const t = process.hrtime.bigint();
  for (let i = 0; i < N; i++) await fn(i);
  console.log(label, (Number(process.hrtime.bigint() - t) / N / 1000).toFixed(2), "µs");
}
const reqs = Array.from({ length: 1000 }, req);
await time("noop await", async () => {});
await time("parseJsonBody", (i) => parseJsonBody(reqs[i % 1000], () => Promise.resolve(ab)));
await time("expressJson", (i) => expressJson({ message: "hi" }, reqs[i % 1000]));
await time("requestUrl", (i) => requestUrl(reqs[i % 1000].url));
await time("unemulated", (i) => unemulatedEchoRoute("esp", "POST", requestUrl(reqs[i % 1000].url)));
await time("searchParams", (i) => requestUrl(reqs[i % 1000].url).searchParams.get("key"));
