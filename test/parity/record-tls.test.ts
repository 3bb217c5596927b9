/**
 * `standin record` over TLS on both sides: its ports serve HTTPS as `start
 * --tls` does (a certificate made at start and its CA, or the user's own),
 * and an https upstream is checked against the system's CAs plus
 * `--upstream-ca` (or not at all with `--upstream-tls-skip-verify`). The
 * upstreams are standins started with TLS and small node servers with
 * certificates made by @peculiar/x509.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer as createHttpsServer, request as httpsRequest } from "node:https";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import Consul from "consul";
import { afterEach, describe, expect, it } from "vitest";
import { RecorderError, startRecorder, type RecorderOptions, type RunningRecorder } from "../../src/parity/record/recorder.js";
import type { Recording } from "../../src/parity/recording.js";
import { startStandin, type RunningStandin } from "../../src/server.js";
import { BIN, CLI_TEST_TIMEOUT_MS, runCli } from "../support/cli.js";
import { ownCertificate } from "../support/own-certificate.js";

const anyPorts = { scheduler: 0, registry: 0, echo: 0 };
const running: Array<{ close(): Promise<unknown> }> = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const thing of running.splice(0).reverse()) await thing.close();
});

async function tlsStandin(): Promise<RunningStandin> {
  const started = await startStandin({ ports: anyPorts, tls: true });
  running.push(started);
  return started;
}

async function recorder(options: RecorderOptions): Promise<RunningRecorder> {
  const started = await startRecorder({ ports: anyPorts, ...options });
  running.push(started);
  return started;
}

/** One https exchange trusting exactly `ca`. */
function get(url: string, ca: string, method = "GET", body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpsRequest(url, { method, ca, agent: false }, (answer) => {
      let text = "";
      answer.setEncoding("utf8");
      answer.on("data", (chunk: string) => (text += chunk));
      answer.on("end", () => resolve({ status: answer.statusCode!, text }));
      answer.on("error", reject);
    });
    sent.on("error", reject);
    sent.end(body);
  });
}

describe("standin record over TLS", () => {
  it("serves HTTPS with a CA of its own, trusts an https upstream by --upstream-ca, and records as over HTTP", async () => {
    const upstream = await tlsStandin();
    const through = await recorder({ upstreams: { scheduler: upstream.urls.scheduler, registry: upstream.urls.registry }, tls: true, upstreamCa: upstream.ca!.pem });
    expect(through.urls.registry).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(readFileSync(through.ca!.path, "utf8")).toBe(through.ca!.pem);

    // A real client speaking HTTPS to the recorder, trusting the recorder's CA only.
    const consul = new Consul({ host: "127.0.0.1", port: Number(new URL(through.urls.registry!).port), secure: true, ca: [through.ca!.pem] } as ConstructorParameters<
      typeof Consul
    >[0]);
    expect(await consul.kv.set("over-tls", "yes")).toBe(true);
    const direct = await get(`${upstream.urls.registry}/v1/kv/over-tls?raw`, upstream.ca!.pem);
    expect(direct).toEqual({ status: 200, text: "yes" });
    expect(await get(`${through.urls.registry}/v1/kv/over-tls?raw`, through.ca!.pem)).toEqual(direct);
    const leader = await get(`${through.urls.scheduler}/v1/status/leader`, through.ca!.pem);
    expect(leader).toEqual(await get(`${upstream.urls.scheduler}/v1/status/leader`, upstream.ca!.pem));

    const recording = await through.close();
    // The products' versions were read over TLS with the same trust.
    expect(Object.keys(recording.products ?? {}).sort()).toEqual(["registry", "scheduler"]);
    expect(recording.upstreams).toEqual({ scheduler: upstream.urls.scheduler, registry: upstream.urls.registry });
    expect(recording.exchanges.map((e) => [e.service, e.method, e.path, e.response?.status, e.response?.body?.text])).toEqual([
      ["registry", "PUT", "/v1/kv/over-tls", 200, "true"],
      ["registry", "GET", "/v1/kv/over-tls?raw", 200, "yes"],
      ["scheduler", "GET", "/v1/status/leader", 200, leader.text],
    ]);
    // The CA made at start goes with the recorder, as start's does.
    expect(existsSync(through.ca!.path)).toBe(false);
  });

  it("answers 502 with the reason for an upstream it cannot trust; --upstream-tls-skip-verify accepts it", async () => {
    const upstream = await tlsStandin();
    const checked = await recorder({ upstreams: { registry: upstream.urls.registry } });
    const refused = await fetch(`${checked.urls.registry}/v1/status/leader`);
    expect(refused.status).toBe(502);
    expect(await refused.text()).toMatch(
      new RegExp(`^standin record: cannot reach the upstream ${upstream.urls.registry}: UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate\\n$`),
    );
    const recording = await checked.close();
    expect(recording.products).toBeUndefined();
    expect(recording.exchanges[0]!.error).toBe("no answer from the upstream (UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify the first certificate)");

    const unchecked = await recorder({ upstreams: { registry: upstream.urls.registry }, upstreamTlsSkipVerify: true });
    const answer = await fetch(`${unchecked.urls.registry}/v1/status/leader`);
    expect(answer.status).toBe(200);
    expect((await unchecked.close()).products?.registry).toBeDefined();
  });

  it("serves the user's own certificate (--tls-cert, --tls-key) in front of a plain HTTP upstream", async () => {
    const own = await ownCertificate("a recorder of my own");
    const upstream = await startStandin({ ports: anyPorts });
    running.push(upstream);
    const through = await recorder({ upstreams: { registry: upstream.urls.registry }, tls: own, readProducts: false });
    expect(through.ca).toBeUndefined();
    expect(await get(`${through.urls.registry}/v1/kv/mine?raw`, own.cert)).toEqual({ status: 404, text: "" });
    await expect(recorder({ upstreams: { registry: upstream.urls.registry }, tls: { cert: own.cert, key: "not a key" } })).rejects.toThrow(
      /^the TLS certificate and key cannot be served: /,
    );
  });

  it("switches protocols over TLS on both sides, the upstream trusted by --upstream-ca", async () => {
    const own = await ownCertificate("a recorder of my own");
    const sockets = new Set<Duplex>();
    const server = createHttpsServer({ cert: own.cert, key: own.key }, (_, res) => res.writeHead(404).end());
    server.on("upgrade", (incoming: IncomingMessage, socket: Duplex) => {
      sockets.add(socket);
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\nConnection: Upgrade\r\nX-Path: ${incoming.url}\r\n\r\n`);
      socket.on("data", (chunk: Buffer) => socket.write(chunk.toString("utf8").toUpperCase()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    running.push({
      close: () => {
        for (const socket of sockets) socket.destroy();
        return new Promise((resolve) => server.close(resolve));
      },
    });
    const through = await recorder({
      upstreams: { scheduler: `https://127.0.0.1:${(server.address() as AddressInfo).port}` },
      tls: true,
      upstreamCa: own.cert,
      readProducts: false,
    });

    const switched = await new Promise<{ headers: IncomingMessage["headers"]; socket: Duplex }>((resolve, reject) => {
      const sent = httpsRequest(`${through.urls.scheduler}/v1/client/allocation/a1/exec`, {
        ca: through.ca!.pem,
        agent: false,
        headers: { Connection: "Upgrade", Upgrade: "shout" },
      });
      sent.on("upgrade", (answer: IncomingMessage, socket: Duplex) => resolve({ headers: answer.headers, socket }));
      sent.on("response", (answer: IncomingMessage) => reject(new Error(`not switched: ${answer.statusCode}`)));
      sent.on("error", reject);
      sent.end();
    });
    expect(switched.headers).toMatchObject({ upgrade: "shout", "x-path": "/v1/client/allocation/a1/exec" });
    const reply = new Promise<string>((resolve) => switched.socket.once("data", (chunk: Buffer) => resolve(chunk.toString("utf8"))));
    switched.socket.write("over tls");
    expect(await reply).toBe("OVER TLS");
    switched.socket.destroy();
    const recording = await through.close();
    expect(recording.exchanges.map((e) => [e.path, e.response?.status])).toEqual([["/v1/client/allocation/a1/exec", 101]]);
  });

  it("refuses an --upstream-ca without a certificate, or with one it cannot read", async () => {
    const upstreams = { registry: "https://127.0.0.1:1" };
    await expect(recorder({ upstreams, upstreamCa: "hello" })).rejects.toThrow(new RecorderError("--upstream-ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)"));
    await expect(recorder({ upstreams, upstreamCa: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" })).rejects.toThrow(
      /^--upstream-ca: certificate 1 cannot be read \(/,
    );
  });
});

describe("standin record --tls as a CI job runs it", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("writes the CA into the ready file, wait-ready trusts it, stop writes the recording", async () => {
    const upstream = await tlsStandin();
    const dir = mkdtempSync(join(tmpdir(), "standin-record-tls-"));
    const caFile = join(dir, "upstream-ca.pem");
    writeFileSync(caFile, upstream.ca!.pem);
    const readyFile = join(dir, "ready.json");
    const out = join(dir, "run.recording.json");
    const child = spawn(
      process.execPath,
      [
        BIN,
        "record",
        "--registry-upstream",
        upstream.urls.registry,
        "--registry-port",
        "0",
        "--upstream-ca",
        caFile,
        "--tls",
        "--tls-dir",
        join(dir, "tls"),
        "--out",
        out,
        "--ready-file",
        readyFile,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (d) => (stdout += d));
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

    const waited = await runCli(["wait-ready", "--ready-file", readyFile, "--timeout", "60s"]);
    expect(waited, stderr).toMatchObject({ code: 0 });
    const ready = JSON.parse(readFileSync(readyFile, "utf8")) as { pid: number; registry: string; ca: string };
    expect(Object.keys(ready).sort()).toEqual(["ca", "pid", "registry"]);
    expect(ready.ca).toBe(join(dir, "tls", "ca.pem"));
    expect(ready.registry).toMatch(/^https:/);
    expect(stdout).toContain(`  tls ca     ${ready.ca}\n`);
    expect(await get(`${ready.registry}/v1/kv/ci?raw`, readFileSync(ready.ca, "utf8"))).toEqual({ status: 404, text: "" });

    expect(await runCli(["stop", "--ready-file", readyFile, "--timeout", "60s"])).toMatchObject({ code: 0 });
    expect(await exited).toBe(0);
    const recording = JSON.parse(readFileSync(out, "utf8")) as Recording;
    expect(recording.exchanges.map((e) => [e.method, e.path, e.response?.status])).toEqual([["GET", "/v1/kv/ci?raw", 404]]);
  });

  it("refuses in one line: --tls-cert without --tls-key, an --upstream-ca it cannot read or that holds no certificate", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-record-tls-"));
    const out = join(dir, "r.json");
    const base = ["record", "--registry-upstream", "https://127.0.0.1:1", "--registry-port", "0", "--out", out];
    expect(await runCli([...base, "--tls-cert", join(dir, "cert.pem")])).toMatchObject({ code: 1, stderr: "standin record: --tls-cert and --tls-key go together\n" });
    const missing = await runCli([...base, "--upstream-ca", join(dir, "none.pem")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^standin record: cannot read --upstream-ca .*none\.pem: .*\n$/);
    writeFileSync(join(dir, "empty.pem"), "nothing here\n");
    expect(await runCli([...base, "--upstream-ca", join(dir, "empty.pem")])).toMatchObject({
      code: 1,
      stderr: "standin record: --upstream-ca holds no PEM certificate (-----BEGIN CERTIFICATE-----)\n",
    });
    expect(existsSync(out)).toBe(false);
  });
});
