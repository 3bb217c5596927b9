/**
 * HTTPS on every service port: a certificate made at start (`tls: true`,
 * `standin start --tls`) or the user's own (`--tls-cert/--tls-key`). Every
 * client here verifies the server certificate against the CA standin wrote
 * (or the user's certificate); a client without it must be refused, which
 * proves the verification is real.
 */
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type PeerCertificate } from "node:tls";
import Consul from "consul";
import { Agent, fetch as undiciFetch } from "undici";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startStandin, type RunningStandin } from "../src/server.js";
import { certificateNames, TlsError } from "../src/tls.js";
import { CLI_TEST_TIMEOUT_MS, FREE_PORTS, resetCli, runCli, sharedCli, startCli } from "./support/cli.js";
import { ownCertificate } from "./support/own-certificate.js";

const anyPorts = { scheduler: 0, registry: 0, echo: 0 };
const dir = mkdtempSync(join(tmpdir(), "standin-tls-test-"));
const children: ChildProcess[] = [];
const running: RunningStandin[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  await Promise.all(running.splice(0).map((srv) => srv.close()));
});

async function start(options: Parameters<typeof startStandin>[0]): Promise<RunningStandin> {
  const srv = await startStandin({ ports: anyPorts, ...options });
  running.push(srv);
  return srv;
}

/** fetch that trusts exactly the given CA certificates (and nothing else). */
function trusting(ca: string | Buffer) {
  const dispatcher = new Agent({ connect: { ca } });
  return (url: string, init: Parameters<typeof undiciFetch>[1] = {}) => undiciFetch(url, { ...init, dispatcher });
}

/** The error code under a failed fetch (undici wraps the socket's error as `cause`). */
async function failureCode(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
  } catch (error) {
    return ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code ?? (error as NodeJS.ErrnoException).code;
  }
  throw new Error("expected the request to fail");
}

/** A TLS handshake checking the certificate for `servername`; resolves with what the client concluded. */
function handshake(port: number, host: string, servername: string, ca: string): Promise<{ authorized: boolean; error?: string; altNames?: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername, ca, rejectUnauthorized: false }, () => {
      const peer: PeerCertificate = socket.getPeerCertificate();
      resolve({ authorized: socket.authorized, error: socket.authorizationError?.toString(), altNames: peer.subjectaltname });
      socket.end();
    });
    socket.on("error", reject);
  });
}

/**
 * node-consul over https trusting exactly `ca`: papi, its HTTP layer, hands TLS
 * client options such as `ca` to https.request (its typings leave them out).
 */
function consulTrusting(port: number, ca: string): Consul {
  return new Consul({ host: "127.0.0.1", port, secure: true, ca: [ca] } as ConstructorParameters<typeof Consul>[0]);
}

describe("startStandin({ tls: true })", () => {
  it("serves https on every port, writes the CA, and removes the CA's directory on close", async () => {
    const srv = await start({ tls: true });
    for (const service of ["scheduler", "registry", "echo"] as const) expect(srv.urls[service]).toBe(`https://127.0.0.1:${srv.ports[service]}`);
    expect(srv.urls.control).toBe(`https://127.0.0.1:${srv.ports.scheduler}/_standin`);
    expect(srv.ca).toBeDefined();
    expect(srv.ca!.pem).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
    expect(readFileSync(srv.ca!.path, "utf8")).toBe(srv.ca!.pem);
    expect(srv.emulator.tls).toBe(true);
    await srv.close();
    expect(existsSync(srv.ca!.path)).toBe(false);
  });

  it("node-consul over https, trusting the CA, creates and reads a session", async () => {
    const srv = await start({ tls: true });
    const consul = consulTrusting(srv.ports.registry, srv.ca!.pem);
    try {
      const created = (await consul.session.create({ name: "over-tls", ttl: "30s" })) as { ID: string };
      expect(created.ID).toMatch(/^[0-9a-f-]{36}$/);
      const session = (await consul.session.info(created.ID)) as { ID: string; Name: string; TTL: string };
      expect(session).toMatchObject({ ID: created.ID, Name: "over-tls", TTL: "30s" });
      const listed = (await consul.session.list()) as Array<{ ID: string }>;
      expect(listed.map((s) => s.ID)).toContain(created.ID);
    } finally {
      consul.destroy();
    }
  });

  it("fetch, trusting the CA, reaches the scheduler, the control API on each port, and echo", async () => {
    const srv = await start({ tls: true });
    const get = trusting(srv.ca!.pem);
    const health = await get(`${srv.urls.scheduler}/v1/agent/health`);
    expect(health.status).toBe(200);
    const jobs = await get(`${srv.urls.scheduler}/v1/jobs`);
    expect(jobs.status).toBe(200);
    expect(await jobs.json()).toEqual([]);
    for (const service of ["scheduler", "registry", "echo"] as const) {
      const ready = await get(`${srv.urls[service]}/_standin/ready`);
      expect(await ready.json()).toMatchObject({ ready: true });
    }
    const echo = await get(`${srv.urls.echo}/echo?key=test-api-key`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "over tls" }),
    });
    expect(echo.status).toBe(200);
    expect(await echo.json()).toEqual({ message: "over tls" });
    const description = (await (await get(`${srv.urls.echo}/openapi.json`)).json()) as { schemes: string[] };
    expect(description.schemes).toEqual(["http", "https"]);
  });

  it("refuses clients that do not trust the CA: undici, Node's global fetch, node-consul", async () => {
    const srv = await start({ tls: true });
    // The server sends its own certificate only; without the CA nothing vouches for it.
    expect(await failureCode(undiciFetch(`${srv.urls.scheduler}/v1/agent/health`))).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    expect(await failureCode(fetch(`${srv.urls.echo}/openapi.json`))).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    const consul = new Consul({ host: "127.0.0.1", port: srv.ports.registry, secure: true });
    try {
      await expect(consul.session.list()).rejects.toThrow(/unable to verify the first certificate/);
    } finally {
      consul.destroy();
    }
    // Another run's CA does not do either: each start makes its own.
    const other = await start({ tls: true });
    expect(other.ca!.pem).not.toBe(srv.ca!.pem);
    expect(await failureCode(trusting(other.ca!.pem)(`${srv.urls.scheduler}/v1/agent/health`))).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
  });

  it("the certificate is valid for localhost, 127.0.0.1, ::1 and another listen host, and for no other name", async () => {
    const srv = await start({ tls: true, host: "127.0.0.2" });
    expect(srv.urls.echo).toBe(`https://127.0.0.2:${srv.ports.echo}`);
    const ca = srv.ca!.pem;
    const port = srv.ports.echo;
    const viaLocalhost = await handshake(port, "127.0.0.2", "localhost", ca);
    expect(viaLocalhost).toMatchObject({ authorized: true, altNames: "DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:127.0.0.2" });
    expect((await trusting(ca)(`${srv.urls.echo}/openapi.json`)).status).toBe(200);
    // The chain is trusted, but the certificate does not name this host.
    expect(await handshake(port, "127.0.0.2", "example.com", ca)).toMatchObject({ authorized: false, error: "ERR_TLS_CERT_ALTNAME_INVALID" });
  });

  it("::1 as the listen host", async () => {
    const srv = await start({ tls: true, host: "::1" });
    expect(srv.urls.scheduler).toBe(`https://[::1]:${srv.ports.scheduler}`);
    expect((await trusting(srv.ca!.pem)(`${srv.urls.scheduler}/v1/agent/health`)).status).toBe(200);
  });

  it("tlsDir: the CA goes there (created if needed) and stays after close", async () => {
    const tlsDir = join(dir, "nested", "tls");
    const srv = await start({ tls: true, tlsDir });
    expect(srv.ca!.path).toBe(join(tlsDir, "ca.pem"));
    expect(readFileSync(srv.ca!.path, "utf8")).toBe(srv.ca!.pem);
    await srv.close();
    expect(readFileSync(join(tlsDir, "ca.pem"), "utf8")).toBe(srv.ca!.pem);
  });
});

describe("certificateNames", () => {
  it("adds the listen host when it is another name or address; all interfaces add this machine's name", () => {
    const loopback = ["dns:localhost", "ip:127.0.0.1", "ip:::1"];
    const names = (host: string) => certificateNames(host).map((n) => `${n.type}:${n.value}`);
    expect(names("127.0.0.1")).toEqual(loopback);
    expect(names("::1")).toEqual(loopback);
    expect(names("localhost")).toEqual(loopback);
    expect(names("10.1.2.3")).toEqual([...loopback, "ip:10.1.2.3"]);
    expect(names("fd00::5")).toEqual([...loopback, "ip:fd00::5"]);
    expect(names("CI-Box.internal")).toEqual([...loopback, "dns:ci-box.internal"]);
    expect(names("0.0.0.0")).toHaveLength(4);
    expect(names("0.0.0.0")[3]).toMatch(/^dns:/);
  });
});

describe("startStandin({ tls: { cert, key } })", () => {
  it("serves the user's own certificate; a client trusting it gets through, one that does not is refused", async () => {
    const own = await ownCertificate("my own standin");
    const srv = await start({ tls: own });
    expect(srv.ca).toBeUndefined();
    expect(srv.urls.registry).toBe(`https://127.0.0.1:${srv.ports.registry}`);
    expect((await trusting(own.cert)(`${srv.urls.scheduler}/v1/agent/health`)).status).toBe(200);
    const consul = consulTrusting(srv.ports.registry, own.cert);
    try {
      const created = (await consul.session.create({ ttl: "10s" })) as { ID: string };
      expect(((await consul.session.info(created.ID)) as { ID: string }).ID).toBe(created.ID);
    } finally {
      consul.destroy();
    }
    expect(await failureCode(undiciFetch(`${srv.urls.echo}/openapi.json`))).toBe("DEPTH_ZERO_SELF_SIGNED_CERT");
  });

  it("a key that does not match, or a file that is no PEM, is a TlsError before any port is bound", async () => {
    const [a, b] = [await ownCertificate("my own standin"), await ownCertificate("my own standin")];
    await expect(startStandin({ ports: anyPorts, tls: { cert: a.cert, key: b.key } })).rejects.toThrow(TlsError);
    await expect(startStandin({ ports: anyPorts, tls: { cert: a.cert, key: b.key } })).rejects.toThrow(/^the TLS certificate and key cannot be served: .*key values mismatch/);
    await expect(startStandin({ ports: anyPorts, tls: { cert: "not a certificate", key: a.key } })).rejects.toThrow(TlsError);
  });
});

describe("standin start with TLS (the CLI)", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const cli = (args: string[]) => runCli(args);

  it("--tls prints the CA's path and https URLs; a client trusting that file gets through; the file goes on exit", async () => {
    const s = await startCli(["--tls"], children);
    const caLine = /^ {2}tls ca {5}(\S+)$/m.exec(s.stdout());
    expect(caLine).not.toBeNull();
    const caPath = caLine![1]!;
    expect(caPath).toMatch(/standin-tls-[^/]+\/ca\.pem$/);
    for (const service of ["scheduler", "registry", "echo"]) expect(s.urls[service]).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(s.urls.control).toBe(`${s.urls.scheduler}/_standin`);
    const get = trusting(readFileSync(caPath));
    expect(await (await get(`${s.urls.control}/ready`)).json()).toMatchObject({ ready: true });
    expect(((await (await get(`${s.urls.echo}/openapi.json`)).json()) as { schemes: string[] }).schemes).toEqual(["http", "https"]);
    expect(await failureCode(undiciFetch(`${s.urls.registry}/v1/session/list`))).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    s.child.kill("SIGINT");
    expect(await s.exited).toBe(0);
    expect(existsSync(caPath)).toBe(false);
  });

  it("--tls-dir implies --tls and keeps ca.pem there", async () => {
    const tlsDir = join(dir, "cli-tls");
    const s = await startCli(["--tls-dir", tlsDir], children);
    expect(s.stdout()).toContain(`  tls ca     ${join(tlsDir, "ca.pem")}\n`);
    expect((await trusting(readFileSync(join(tlsDir, "ca.pem")))(`${s.urls.scheduler}/v1/agent/health`)).status).toBe(200);
    s.child.kill("SIGTERM");
    expect(await s.exited).toBe(0);
    expect(existsSync(join(tlsDir, "ca.pem"))).toBe(true);
  });

  describe("client commands against an https emulator", () => {
    // One emulator for these tests (they test the clients, not start), reset before each.
    const tlsDir = join(dir, "cli-client-tls");
    const ca = join(tlsDir, "ca.pem");
    const emulator = sharedCli(["--tls-dir", tlsDir]);
    beforeEach(() => resetCli(emulator(), trusting(readFileSync(ca))), CLI_TEST_TIMEOUT_MS);

    it("reach it with --ca (or STANDIN_CA) on every port", async () => {
      const s = emulator();
      const clock = await cli(["clock", "--url", s.urls.scheduler!, "--ca", ca]);
      expect([clock.code, JSON.parse(clock.stdout).now]).toEqual([0, "2026-01-01T00:00:00Z"]);
      const advanced = await cli(["advance", "90s", "--url", s.urls.registry!, "--ca", ca]);
      expect([advanced.code, advanced.stdout.split("\n")[0]]).toEqual([0, "now 2026-01-01T00:01:30Z"]);
      const viaEnv = await runCli(["clock", "--url", s.urls.echo!], { ...process.env, STANDIN_CA: ca });
      expect(JSON.parse(viaEnv.stdout).now).toBe("2026-01-01T00:01:30Z");
    });

    it("say why they cannot connect without it", async () => {
      const untrusted = await cli(["clock", "--url", emulator().urls.scheduler!]);
      expect(untrusted.code).toBe(1);
      expect(untrusted.stderr).toMatch(/^standin: cannot reach https:\/\/127\.0\.0\.1:\d+: .*(verify|certificate)/);
    });

    it("say in one line that a --ca file cannot be read", async () => {
      const missing = await cli(["clock", "--url", emulator().urls.scheduler!, "--ca", join(tlsDir, "nope.pem")]);
      expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/^standin: cannot read --ca .*nope\.pem: ENOENT/)]);
    });
  });

  it("--tls-cert/--tls-key serve the user's certificate (no CA line)", async () => {
    const own = await ownCertificate("my own standin");
    writeFileSync(join(dir, "own.pem"), own.cert);
    writeFileSync(join(dir, "own-key.pem"), own.key);
    const s = await startCli(["--tls-cert", join(dir, "own.pem"), "--tls-key", join(dir, "own-key.pem")], children);
    expect(s.stdout()).not.toContain("tls ca");
    expect(s.urls.echo).toMatch(/^https:/);
    const res = await trusting(own.cert)(`${s.urls.echo}/echo?key=test-api-key`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"mine"}' });
    expect(await res.json()).toEqual({ message: "mine" });
  });

  describe("bad TLS flags and files fail in one line, exit 1, no stack trace", () => {
    const missing = join(dir, "missing.pem");
    beforeAll(async () => {
      const own = await ownCertificate("my own standin");
      const other = await ownCertificate("my own standin");
      writeFileSync(join(dir, "c.pem"), own.cert);
      writeFileSync(join(dir, "k.pem"), own.key);
      writeFileSync(join(dir, "other-k.pem"), other.key);
      writeFileSync(join(dir, "garbage.pem"), "hello\n");
    }, CLI_TEST_TIMEOUT_MS);
    // One start per case (each is about start's own exit), each its own test with its own time bound.
    const cases: Array<[string, string[], RegExp]> = [
      [
        "--tls-cert of a missing file",
        ["--tls-cert", missing, "--tls-key", join(dir, "k.pem")],
        new RegExp(`^standin: cannot read --tls-cert ${missing}: ENOENT: no such file or directory\\n$`),
      ],
      ["--tls-key of a missing file", ["--tls-cert", join(dir, "c.pem"), "--tls-key", missing], /^standin: cannot read --tls-key .*missing\.pem: ENOENT[^\n]*\n$/],
      ["--tls-key of a directory", ["--tls-cert", join(dir, "c.pem"), "--tls-key", dir], /^standin: cannot read --tls-key .*: EISDIR[^\n]*\n$/],
      ["--tls-cert alone", ["--tls-cert", join(dir, "c.pem")], /^standin: --tls-cert and --tls-key go together\n$/],
      ["--tls-key alone", ["--tls-key", join(dir, "k.pem")], /^standin: --tls-cert and --tls-key go together\n$/],
      [
        "--tls-dir with --tls-cert",
        ["--tls-cert", join(dir, "c.pem"), "--tls-key", join(dir, "k.pem"), "--tls-dir", dir],
        /^standin: --tls-dir is for a generated certificate, not with --tls-cert\n$/,
      ],
      [
        "a --tls-cert that is no PEM",
        ["--tls-cert", join(dir, "garbage.pem"), "--tls-key", join(dir, "k.pem")],
        /^standin: the TLS certificate and key cannot be served: [^\n]+\n$/,
      ],
      [
        "a key that does not match the certificate",
        ["--tls-cert", join(dir, "c.pem"), "--tls-key", join(dir, "other-k.pem")],
        /^standin: the TLS certificate and key cannot be served: [^\n]*key values mismatch\n$/,
      ],
    ];
    it.each(cases)("%s", async (_name, args, stderr) => {
      const res = await cli(["start", ...FREE_PORTS, ...args]);
      expect({ args, code: res.code, stdout: res.stdout }).toEqual({ args, code: 1, stdout: "" });
      expect(res.stderr).toMatch(stderr);
    });
  });
});
