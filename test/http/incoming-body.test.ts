/**
 * Over HTTP a body that states its length is read straight from the Node
 * request (http/middleware): every route still gets the same bytes (as text,
 * JSON, bytes, gzip), the journal and the tape see them, and a client that
 * goes away mid-body leaves nothing hanging.
 */
import { connect } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../../src/server.js";

let srv: RunningStandin;
beforeAll(async () => {
  srv = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
});
afterAll(() => srv.close());

describe("bodies read from the Node request", () => {
  it("JSON, raw bytes and gzip bodies arrive whole on every service", async () => {
    const echo = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ message: "héllo" }) });
    expect(echo.status).toBe(200);
    expect(await echo.json()).toEqual({ message: "héllo" });

    const gzipped = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" }, body: gzipSync(JSON.stringify({ message: "zipped" })) });
    expect(await gzipped.json()).toEqual({ message: "zipped" });

    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    expect((await fetch(`${srv.urls.registry}/v1/kv/bin`, { method: "PUT", body: bytes })).status).toBe(200);
    expect(Buffer.from(await (await fetch(`${srv.urls.registry}/v1/kv/bin?raw`)).arrayBuffer())).toEqual(bytes);

    const session = await fetch(`${srv.urls.registry}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: "s", TTL: "30s" }) });
    expect(session.status).toBe(200);

    const job = await fetch(`${srv.urls.scheduler}/v1/jobs`, { method: "PUT", body: JSON.stringify({ Job: { ID: "web", Type: "batch", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }] } }) });
    expect(job.status).toBe(200);

    const { requests } = (await (await fetch(`${srv.urls.control}/requests`)).json()) as { requests: Array<{ path: string; body: string | null }> };
    expect(requests.find((r) => r.path === "/v1/session/create")!.body).toBe('{"Name":"s","TTL":"30s"}');
    const tape = (await (await fetch(`${srv.urls.control}/tape`)).json()) as { entries: Array<{ path: string; body?: { base64?: string } }> };
    expect(Buffer.from(tape.entries.find((e) => e.path === "/v1/kv/bin")!.body!.base64!, "base64")).toEqual(bytes);
  });

  it("a client that closes mid-body leaves the emulator answering", async () => {
    const { port } = new URL(srv.urls.registry);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write("PUT /v1/kv/half HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nonly part of it");
        setImmediate(() => {
          socket.destroy();
          resolve();
        });
      });
    });
    const res = await fetch(`${srv.urls.registry}/v1/kv/half`);
    expect(res.status).toBe(404);
    expect((await fetch(`${srv.urls.control}/clock`)).status).toBe(200);
  });
});
