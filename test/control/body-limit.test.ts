/**
 * The control API's body cap (`controlBodyLimit`, `--control-body-limit`):
 * a body over it is a 413 and changes nothing, whether it states its length
 * (refused before it is read) or streams without one (refused at the first
 * byte past the cap). Over a socket, the refusal closes the connection
 * instead of reading the rest.
 */
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { DEFAULT_CONTROL_BODY_LIMIT } from "../../src/http/body-cap.js";

const LIMIT = 4096;
const bigFixture = () => JSON.stringify({ registry: { kv: [{ Key: "big", Value: "x".repeat(LIMIT) }] } });

function streamOf(text: string, chunk = 1000): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream({
    start(controller) {
      for (let i = 0; i < bytes.length; i += chunk) controller.enqueue(bytes.subarray(i, i + chunk));
      controller.close();
    },
  });
}

describe("control body cap", () => {
  it("defaults to 64 MiB", () => {
    expect(DEFAULT_CONTROL_BODY_LIMIT).toBe(64 * 1024 * 1024);
  });

  it("a stated length over the cap is a 413 and changes nothing", async () => {
    const emu = await createStandin({ controlBodyLimit: LIMIT });
    const hash = emu.stateHash();
    const body = bigFixture();
    const res = await emu.scheduler.request("/_standin/fixtures", { method: "POST", body, headers: { "Content-Length": String(body.length) } });
    expect(res.status).toBe(413);
    expect(res.headers.get("Connection")).toBe("close");
    expect(await res.json()).toEqual({ error: `request body too large: the control API takes at most ${LIMIT} bytes (--control-body-limit)` });
    expect(emu.stateHash()).toBe(hash);
  });

  it.each(["/_standin/fixtures", "/_standin/snapshot", "/_standin/registry/checks"])("a streamed body past the cap on %s is a 413 and changes nothing", async (path) => {
    const emu = await createStandin({ controlBodyLimit: LIMIT });
    const hash = emu.stateHash();
    const method = path === "/_standin/snapshot" ? "PUT" : "POST";
    const res = await emu.registry.request(path, { method, body: streamOf(bigFixture()), duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toContain(`at most ${LIMIT} bytes`);
    expect(emu.stateHash()).toBe(hash);
  });

  it("bodies within the cap, streamed or not, are applied", async () => {
    const emu = await createStandin({ controlBodyLimit: LIMIT });
    const small = JSON.stringify({ registry: { kv: [{ Key: "small", Value: "v" }] } });
    expect((await emu.scheduler.request("/_standin/fixtures", { method: "POST", body: streamOf(small, 7), duplex: "half" } as RequestInit)).status).toBe(200);
    const res = await emu.registry.request("/v1/kv/small?raw");
    expect(await res.text()).toBe("v");
  });

  it("service bodies keep their own limit (the cap is the control API's)", async () => {
    const emu = await createStandin({ controlBodyLimit: 16 });
    const res = await emu.registry.request("/v1/kv/k", { method: "PUT", body: "a value longer than sixteen bytes" });
    expect(res.status).toBe(200);
  });

  describe("over a socket", () => {
    let running: RunningStandin | undefined;
    afterEach(async () => {
      await running?.close();
      running = undefined;
    });

    it("answers 413 without reading a huge body, and the emulator keeps answering", async () => {
      running = await startStandin({ controlBodyLimit: LIMIT, ports: { scheduler: 0, registry: 0, echo: 0 } });
      const { port } = new URL(running.urls.scheduler);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, path: "/_standin/fixtures", method: "POST", headers: { "Content-Length": String(1 << 30) } }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode!, body }));
        });
        req.on("error", reject);
        // One chunk of a body that claims a gigabyte: the answer comes without the rest.
        req.write("x".repeat(1024));
      });
      expect(answer.status).toBe(413);
      expect(JSON.parse(answer.body).error).toContain("--control-body-limit");
      const clock = await fetch(`${running.urls.control}/clock`);
      expect(clock.status).toBe(200);
    });
  });
});
