/**
 * `GET /_standin/clock` is what test harnesses poll, and the bench holds it to
 * 70 % of a bare server's requests/s. The Host guard and the nosniff header
 * (http/host-check, http/no-sniff) once cost it a third of its throughput:
 * each request built the web Request's Headers to read `Host`, judged the
 * same Host again, and turned the answer's header record into a Headers
 * object that the server then turned back into a record. These tests count
 * that work (no timing): the answer and the guard's verdicts stay the same.
 */
import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { HostGuard } from "../../src/http/host-check.js";
import { knownResponseHeaders, noteIncoming } from "../../src/http/known-bodies.js";
import { controlJson, noSniff } from "../../src/http/no-sniff.js";
import { startStandin, type RunningStandin } from "../../src/server.js";

/** A request as @hono/node-server hands it over HTTP: its Node request's raw headers noted, its web headers counted when read. */
function overHttp(url: string, rawHeaders: string[]): { request: Request; headerReads: () => number; incoming: { rawHeaders: string[] } } {
  const request = new Request(url);
  const incoming = { rawHeaders };
  noteIncoming(request, incoming);
  let reads = 0;
  const headers = request.headers;
  Object.defineProperty(request, "headers", {
    get() {
      reads++;
      return headers;
    },
  });
  return { request, headerReads: () => reads, incoming };
}

describe("the Host guard", () => {
  it("judges a repeated Host once, judges a new one again, and every verdict stays right", () => {
    const guard = new HostGuard(["standin.ci"]);
    const verdicts: boolean[] = [];
    for (const host of ["localhost:4646", "localhost:4646", "localhost:4646", "evil.example", "evil.example", "localhost:4646", "standin.ci", "evil.example"]) {
      const { request } = overHttp("http://x/_standin/clock", ["Host", host]);
      verdicts.push(guard.refusal(request) === undefined);
    }
    expect(verdicts).toEqual([true, true, true, false, false, true, true, false]);
    // One judgement per run of equal Hosts: localhost, evil, localhost, standin.ci, evil.
    expect(guard.judged).toBe(5);
  });

  it("reads Host from the request's header record, never from the web Request's headers", () => {
    const guard = new HostGuard();
    const allowed = overHttp("http://x/_standin/clock", ["Host", "127.0.0.1:4646", "Accept", "*/*"]);
    const refused = overHttp("http://x/_standin/clock", ["Host", "attacker.example", "Accept", "*/*"]);
    expect(guard.refusal(allowed.request)).toBeUndefined();
    expect(guard.refusal(refused.request)).toMatch(/Host "attacker.example" is none of these/);
    expect(allowed.headerReads() + refused.headerReads()).toBe(0);
  });
});

describe("nosniff", () => {
  it("an answer built saying nosniff (controlJson) is passed on untouched: its headers are not asked for", () => {
    const answer = controlJson({ now: "2026-01-01T00:00:00Z" });
    let reads = 0;
    const headers = answer.headers;
    Object.defineProperty(answer, "headers", {
      get() {
        reads++;
        return headers;
      },
    });
    expect(noSniff(answer)).toBe(answer);
    expect(reads).toBe(0);
    expect(knownResponseHeaders(answer)).toEqual({ "content-type": "application/json", "x-content-type-options": "nosniff" });
  });

  it("any other answer gets the header set on it", async () => {
    const answer = noSniff(new Response("{}", { headers: { "Content-Type": "application/json" } }));
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(answer.headers.get("content-type")).toBe("application/json");
  });
});

describe("GET /_standin/clock through a port", () => {
  it("reads no web headers of the request and builds no Headers for the answer, which says nosniff", async () => {
    const emu = await createStandin();
    const { request, headerReads, incoming } = overHttp("http://localhost:4646/_standin/clock", ["Host", "localhost:4646", "User-Agent", "poller"]);
    const answerHeaderReads = vi.spyOn(globalThis.Response.prototype, "headers", "get");
    let answer: Response;
    try {
      answer = await emu.scheduler.fetch(request, { incoming });
      expect(answerHeaderReads).not.toHaveBeenCalled();
    } finally {
      answerHeaderReads.mockRestore();
    }
    expect(headerReads()).toBe(0);
    expect(answer.status).toBe(200);
    expect(knownResponseHeaders(answer)).toEqual({ "content-type": "application/json", "x-content-type-options": "nosniff" });
    expect(answer.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await answer.json()).toMatchObject({ now: "2026-01-01T00:00:00Z", mode: "manual", pendingTimers: expect.any(Number) });
  });
});

describe("over the network", () => {
  let running: RunningStandin;
  beforeAll(async () => {
    running = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 } });
  });
  afterAll(() => running.close());

  const raw = (host: string) =>
    new Promise<{ status: number; rawHeaders: string[]; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port: running.ports.scheduler, path: "/_standin/clock", headers: { Host: host } }, (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body }));
      });
      req.on("error", reject);
      req.end();
    });

  it("sends the clock's JSON with its two headers, and keeps refusing a rebound Host between allowed ones", async () => {
    const port = running.ports.scheduler;
    const answers = [];
    for (const host of [`localhost:${port}`, `localhost:${port}`, `attacker.example:${port}`, `localhost:${port}`]) answers.push(await raw(host));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 403, 200]);
    const ok = answers[0]!;
    const headers = new Map<string, string>();
    for (let i = 0; i < ok.rawHeaders.length; i += 2) headers.set(ok.rawHeaders[i]!.toLowerCase(), ok.rawHeaders[i + 1]!);
    expect([...headers.keys()].sort()).toEqual(["connection", "content-length", "content-type", "date", "keep-alive", "x-content-type-options"]);
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("x-content-type-options")).toBe("nosniff");
    expect(Number(headers.get("content-length"))).toBe(Buffer.byteLength(ok.body));
    expect(JSON.parse(ok.body)).toMatchObject({ now: "2026-01-01T00:00:00Z", mode: "manual" });
    const refused = answers[2]!;
    expect(JSON.parse(refused.body).error).toMatch(/a guard against DNS rebinding/);
  });
});
