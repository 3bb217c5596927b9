import { getRequestListener } from "@hono/node-server";
getRequestListener(() => new Response(null));
const { createStandin } = await import("/work/main/dist/index.js");
const emu = await createStandin({ fixture: {} });
const body = JSON.stringify({ message: "hello" });
const n = Number(process.argv[2] ?? 20000);
const t0 = performance.now();
for (let i = 0; i < n; i++) {
  const res = await emu.echo.request("/echo?key=test-api-key", { method: "POST", body, headers: { "content-type": "application/json", "content-length": String(body.length) } });
  if (res.status !== 200) throw new Error(String(res.status));
  await res.arrayBuffer();
}
console.log(((performance.now() - t0) / n * 1000).toFixed(1), "µs/req");
