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
    const echo = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "héllo" }),
    });
    expect(echo.status).toBe(200);
    expect(await echo.json()).toEqual({ message: "héllo" });

    const gzipped = await fetch(`${srv.urls.echo}/echo?key=test-api-key`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: gzipSync(JSON.stringify({ message: "zipped" })),
    });
    expect(await gzipped.json()).toEqual({ message: "zipped" });

    const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255]);
    expect((await fetch(`${srv.urls.registry}/v1/kv/bin`, { method: "PUT", body: bytes })).status).toBe(200);
    expect(Buffer.from(await (await fetch(`${srv.urls.registry}/v1/kv/bin?raw`)).arrayBuffer())).toEqual(bytes);

    const session = await fetch(`${srv.urls.registry}/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: "s", TTL: "30s" }) });
    expect(session.status).toBe(200);

    const job = await fetch(`${srv.urls.scheduler}/v1/jobs`, {
      method: "PUT",
      body: JSON.stringify({
        Job: { ID: "web", Type: "batch", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }] },
      }),
    });
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

describe("request headers from the Node request's raw headers", () => {
  it("make the same record a Headers object would: lower case, sorted, repeats joined, edge whitespace dropped", async () => {
    const { noteIncoming, requestHeaderRecord, requestHeaders } = await import("../../src/http/known-bodies.js");
    const rawHeaders = ["X-Zeta", " z ", "Accept", "a/b", "x-multi", "1", "X-Multi", "2", "Host", "h", "x-empty", ""];
    const request = new Request("http://h/x");
    noteIncoming(request, { rawHeaders });
    const viaHeaders: Record<string, string> = {};
    const reference = new Headers();
    for (let i = 0; i < rawHeaders.length; i += 2) reference.append(rawHeaders[i]!, rawHeaders[i + 1]!);
    reference.forEach((value, name) => {
      viaHeaders[name] = value;
    });
    const record = requestHeaderRecord(request);
    expect(record).toEqual(viaHeaders);
    expect(Object.keys(record)).toEqual(Object.keys(viaHeaders));
    expect(requestHeaders(request).get("X-MULTI")).toBe("1, 2");
    expect(requestHeaders(request).get("missing")).toBeNull();
  });

  it("over HTTP, token headers in any case reach the ACL checks", async () => {
    const acl = await startStandin({
      ports: { scheduler: 0, registry: 0, echo: 0 },
      fixture: { registry: { acl: { enabled: true, defaultPolicy: "deny", tokens: [{ SecretID: "s3", Rules: { key_prefix: { "": { policy: "write" } } } }] } } },
    });
    try {
      const denied = await fetch(`${acl.urls.registry}/v1/kv/a`, { method: "PUT", body: "v" });
      expect(denied.status).toBe(403);
      const allowed = await fetch(`${acl.urls.registry}/v1/kv/a`, { method: "PUT", body: "v", headers: { "x-CONSUL-token": "s3" } });
      expect(allowed.status).toBe(200);
    } finally {
      await acl.close();
    }
  });
});

describe("Hono's body methods over the filled cache", () => {
  it("arrayBuffer, text, json, blob and parseBody all read the body read from the Node request", async () => {
    const { Hono } = await import("hono");
    const { serve } = await import("@hono/node-server");
    const { serviceRequests } = await import("../../src/http/middleware.js");
    const { CappedLog } = await import("../../src/core/journal.js");
    const { createRedactor } = await import("../../src/http/redact.js");
    const seen: unknown[] = [];
    const app = new Hono();
    const clock = { now: () => 0 } as never;
    const store = { index: 1 } as never;
    app.use("*", serviceRequests({ service: "echo", journal: new CappedLog(10), clock, store, redact: createRedactor([]), compressThreshold: 1024, arrived: () => {} }));
    app.post("/", async (c) => {
      seen.push(new TextDecoder().decode(await c.req.arrayBuffer()), await c.req.text(), await c.req.json(), await (await c.req.blob()).text());
      return c.text("ok");
    });
    app.post("/form", async (c) => c.json(await c.req.parseBody()));
    const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
    await new Promise((resolve) => server.once("listening", resolve));
    const { port } = server.address() as { port: number };
    try {
      expect((await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: '{"a":1}' })).status).toBe(200);
      expect(seen).toEqual(['{"a":1}', '{"a":1}', { a: 1 }, '{"a":1}']);
      const form = await fetch(`http://127.0.0.1:${port}/form`, { method: "POST", body: new URLSearchParams({ x: "1", y: "two" }) });
      expect(await form.json()).toEqual({ x: "1", y: "two" });
    } finally {
      server.close();
    }
  });
});
