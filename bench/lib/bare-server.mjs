/**
 * A bare `node:http` server, the baseline for both startup and throughput.
 *
 *   node bench/lib/bare-server.mjs                 answers 200 "x" to everything
 *   node bench/lib/bare-server.mjs '<json spec>'   answers with exactly the given
 *       {"status":200,"contentType":"application/json","bodyBase64":"...","headers":[["X-Name","value"],…]}
 *
 * It listens on a free port and prints `listening http://127.0.0.1:PORT`
 * once it accepts connections. Nothing else runs here on purpose: this is
 * what "an HTTP server in Node" costs before any application code.
 */
import { createServer } from "node:http";

const spec = process.argv[2] ? JSON.parse(process.argv[2]) : { status: 200, contentType: "text/plain", bodyBase64: Buffer.from("x").toString("base64") };
const body = Buffer.from(spec.bodyBase64, "base64");
// Prebuilt once so each request costs only the write: this is the floor.
const headers = { "Content-Type": spec.contentType, "Content-Length": String(body.length) };
for (const [name, value] of spec.headers ?? []) headers[name] = value;

const server = createServer((request, response) => {
  // A request body (POST /echo) is read and dropped, as any server must before the connection is reused.
  request.resume();
  response.writeHead(spec.status, headers);
  response.end(body);
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`listening http://127.0.0.1:${server.address().port}\n`);
});

process.once("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
