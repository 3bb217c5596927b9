/**
 * The framework floor: Hono on @hono/node-server (standin's own stack) with
 * nothing else, answering exactly the bytes the bare floor answers and, like
 * any server that uses a body, reading the request body first (as a web
 * Request, the way standin's handlers get it). Its distance to the bare
 * floor is what the stack itself costs; standin's distance to it is what
 * standin adds.
 *
 *   node bench/lib/hono-server.mjs '<json spec>'   (the spec of bare-server.mjs)
 */
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const spec = JSON.parse(process.argv[2]);
const body = Buffer.from(spec.bodyBase64, "base64");
const headers = { "Content-Type": spec.contentType };
for (const [name, value] of spec.headers ?? []) headers[name] = value;

const app = new Hono();
app.all("*", async (c) => {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") await c.req.arrayBuffer();
  return new Response(body, { status: spec.status, headers });
});

const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  process.stdout.write(`listening http://127.0.0.1:${info.port}\n`);
});

process.once("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections?.();
});
