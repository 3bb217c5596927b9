/**
 * The container image (container/Containerfile, docs/container.md), run as a
 * container runtime runs it: the root file system laid out from the file's
 * COPY lines over the context `scripts/build-container.mjs` stages (and, when
 * podman is installed, compared with the image podman builds from the same
 * file and then run from that image's exported file system), started with its
 * ENTRYPOINT and CMD as its USER in network, mount and PID namespaces of its
 * own (container-runtime.ts), and asked real questions from this machine at
 * the container's address: the scheduler's leader, a registry session, the
 * echo, the control API behind its Host guard, and the HEALTHCHECK's
 * `standin wait-ready` run inside it. Needs root; skips, saying why, without.
 * Slow (an executable build when none is cached): run by `npm run test:package`.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Container, Network, unavailable } from "./container-runtime.js";
import { type ImageConfig, layOut, listing, parseContainerfile } from "./containerfile.js";
import { builtExecutable } from "./executable.js";
import { run, SLOW_STEP_TIMEOUT_MS } from "./support.js";

const ROOT = process.cwd();
const CONTAINERFILE = parseContainerfile(readFileSync(join(ROOT, "container/Containerfile"), "utf8"));
const cannotRun = unavailable();
if (cannotRun) console.warn(`container test skipped: ${cannotRun}`);
const podman = commandExists("podman");
if (!podman) console.warn("container test: no podman on PATH, so the image is run from the Containerfile's COPY lines laid out here, not from a podman build");

/** The libraries the executable links, the files the image's user and /etc/hosts need, and the mount points. */
const EXPECTED_PATHS = [
  "/etc/group",
  "/etc/hosts",
  "/etc/passwd",
  "/fixtures",
  "/tmp",
  "/usr/local/bin/standin",
  expect.stringMatching(/^\/lib.*\/ld-linux.*\.so\.\d$/),
  expect.stringMatching(/\/libc\.so\.6$/),
  expect.stringMatching(/\/libstdc\+\+\.so\.6$/),
];

describe.skipIf(cannotRun !== undefined)("the container image, run from its root file system as a runtime runs it", () => {
  let work: string;
  let context: string;
  let laidOut: string;
  /** The file system and configuration the container runs: podman's image when podman is here. */
  let rootfs: string;
  let config: ImageConfig;
  /** listing() of each file system before any run adds a runtime's mount points to it. */
  let laidOutFiles: string[];
  let imageFiles: string[];
  let network: Network;
  let container: Container;
  const tag = `standin-test:${process.pid}`;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "standin-container-"));
    const executable = await builtExecutable(ROOT);
    context = join(work, "context");
    const staged = await run("node", ["scripts/build-container.mjs", "--executable", executable, "--out", context], { cwd: ROOT });
    expect(staged, staged.stderr).toMatchObject({ code: 0 });

    laidOut = join(work, "laid-out");
    mkdirSync(laidOut);
    layOut(CONTAINERFILE, context, laidOut);
    rootfs = laidOut;
    config = CONTAINERFILE.config;
    if (podman) ({ rootfs, config } = await podmanImage(context, tag, join(work, "podman")));
    laidOutFiles = listing(laidOut);
    imageFiles = listing(rootfs);

    network = new Network(process.pid);
    network.create();
    container = new Container(network, rootfs, config);
  }, SLOW_STEP_TIMEOUT_MS);

  afterAll(async () => {
    container?.kill();
    await container?.exited;
    network?.remove();
    if (podman) execFileSync("podman", ["rmi", "--force", `localhost/${tag}`], { stdio: "ignore" });
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("holds the executable, the libraries it links and a few files in /etc: no shell, nothing else", () => {
    const files = laidOutFiles.filter((line) => !line.startsWith("d ") || /^d \d+ \/(tmp|fixtures)$/.test(line)).map((line) => line.slice(7));
    expect(files).toEqual(expect.arrayContaining(EXPECTED_PATHS));
    expect(files.filter((path) => !path.includes("/lib"))).toEqual(["/etc/group", "/etc/hosts", "/etc/passwd", "/fixtures", "/tmp", "/usr/local/bin/standin"]);
    expect(laidOutFiles).toContain("d 1777 /tmp");
    expect(laidOutFiles).toContain("f 0755 /usr/local/bin/standin");
  });

  it.skipIf(!podman)("podman builds the same file system and configuration from the Containerfile", () => {
    expect(imageFiles).toEqual(laidOutFiles);
    expect(config).toEqual(CONTAINERFILE.config);
  });

  it("declares the three ports, the fixture volume, a non-root user, the CLI as entrypoint and start on every interface", () => {
    expect(config.exposed).toEqual([4646, 8080, 8500]);
    expect(config.volumes).toEqual(["/fixtures"]);
    expect(config.workdir).toBe("/fixtures");
    expect(config.user).not.toMatch(/^0:/);
    expect(config.entrypoint).toEqual(["/usr/local/bin/standin"]);
    expect(config.cmd).toEqual(["start", "--host", "0.0.0.0", "--allowed-host", "standin"]);
    expect(config.healthcheck).toEqual(["/usr/local/bin/standin", "wait-ready", "--timeout", "3s"]);
  });

  it("the HEALTHCHECK command, run inside the container, reports ready, and the process runs as the image's user", async () => {
    expect(await healthy(container, config)).toEqual({ code: 0, stdout: "standin ready at http://127.0.0.1:4646\n", stderr: "" });
    const status = readFileSync(`/proc/${await container.pid()}/status`, "utf8");
    const [uid, gid] = config.user.split(":");
    expect(status).toMatch(new RegExp(`^Uid:\\t${uid}\\t${uid}\\t${uid}\\t${uid}$`, "m"));
    expect(status).toMatch(new RegExp(`^Gid:\\t${gid}\\t${gid}\\t${gid}\\t${gid}$`, "m"));
  });

  it("serves the scheduler, the registry and the echo on the container's address", async () => {
    const at = network.containerAddress;
    expect(await get(`http://${at}:4646/v1/status/leader`)).toEqual({ status: 200, body: '"127.0.0.1:4647"' });
    const session = await get(`http://${at}:8500/v1/session/create`, { method: "PUT", body: JSON.stringify({ Name: "container", TTL: "15s" }) });
    expect(session.status).toBe(200);
    const { ID } = JSON.parse(session.body) as { ID: string };
    expect(ID).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse((await get(`http://${at}:8500/v1/session/info/${ID}`)).body)).toEqual([expect.objectContaining({ ID, Name: "container", TTL: "15s" })]);
    const echo = await get(`http://${at}:8080/echo?key=test-api-key`, {
      method: "POST",
      body: JSON.stringify({ message: "from outside" }),
      headers: { "Content-Type": "application/json" },
    });
    expect(echo).toEqual({ status: 200, body: JSON.stringify({ message: "from outside" }) });
  });

  it("the control API answers a published port's localhost, the container's name and its address, and refuses other names", async () => {
    const at = network.containerAddress;
    const clock = `http://${at}:4646/_standin/clock`;
    expect((await get(clock, { headers: { Host: "localhost:4646" } })).status).toBe(200);
    expect((await get(clock, { headers: { Host: "standin:4646" } })).status).toBe(200);
    expect((await get(clock)).status).toBe(200);
    const refused = await get(clock, { headers: { Host: "rebound.example:4646" } });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("--allowed-host");
  });

  it("SIGTERM to the container's PID 1 stops it with 0", async () => {
    expect(await container.stop()).toBe(0);
    // The line docs/container.md's testcontainers sample for Python waits for.
    expect(container.logs()).toMatch(/^standin ready \(seed 1, /m);
    expect(container.logs()).not.toMatch(/error|warning/i);
  });

  it("a fixture in the volume, named relative to the WORKDIR, with the CMD replaced as `docker run … start …` does", async () => {
    const volume = join(work, "fixtures-volume");
    mkdirSync(volume);
    writeFileSync(join(volume, "world.json"), JSON.stringify({ seed: 7, clock: { start: "2030-06-01T00:00:00Z", mode: "manual" } }));
    const withFixture = new Container(network, rootfs, config, {
      args: ["start", "--host", "0.0.0.0", "--fixture", "world.json"],
      volumes: { [volume]: "/fixtures" },
    });
    try {
      expect((await healthy(withFixture, config)).code).toBe(0);
      const clock = await get(`http://${network.containerAddress}:4646/_standin/clock`);
      expect(JSON.parse(clock.body)).toMatchObject({ now: "2030-06-01T00:00:00Z", mode: "manual" });
      expect(await withFixture.stop()).toBe(0);
    } finally {
      withFixture.kill();
    }
  });
});

/**
 * The HEALTHCHECK run inside the container until it passes, as a runtime runs it every interval
 * (each run waits up to the --timeout the Containerfile gives it); the last outcome.
 */
async function healthy(container: Container, config: ImageConfig) {
  let outcome = await container.exec(config.healthcheck);
  for (let attempt = 1; attempt < 20 && outcome.code !== 0; attempt++) outcome = await container.exec(config.healthcheck);
  return outcome;
}

/** The image podman builds from the staged context: its exported file system and its configuration. */
async function podmanImage(context: string, tag: string, into: string): Promise<{ rootfs: string; config: ImageConfig }> {
  const podmanRun = async (args: string[]) => {
    const done = await run("podman", args, { cwd: context });
    expect(done, done.stderr).toMatchObject({ code: 0 });
    return done.stdout.trim();
  };
  // The docker format keeps the HEALTHCHECK (the OCI format has none).
  await podmanRun(["build", "--quiet", "--format", "docker", "--tag", tag, "--file", join(context, "Containerfile"), context]);
  const [inspected] = JSON.parse(await podmanRun(["image", "inspect", tag])) as {
    Config: { Entrypoint: string[]; Cmd: string[]; User: string; WorkingDir: string; Env: string[]; ExposedPorts: Record<string, object>; Volumes: Record<string, object> };
    Healthcheck?: { Test: string[] };
  }[];
  const { Config } = inspected!;
  // `podman create` makes a container without running it; its export is the image's file system.
  const id = await podmanRun(["create", tag]);
  mkdirSync(into);
  const tar = join(into, "..", "podman-export.tar");
  try {
    await podmanRun(["export", "--output", tar, id]);
  } finally {
    await run("podman", ["rm", "--force", id], { cwd: context });
  }
  execFileSync("tar", ["-xf", tar, "-C", into]);
  const env = Object.fromEntries(Config.Env.filter((e) => !e.startsWith("PATH=")).map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
  return {
    rootfs: into,
    config: {
      entrypoint: Config.Entrypoint,
      cmd: Config.Cmd,
      user: Config.User,
      workdir: Config.WorkingDir,
      env,
      healthcheck: inspected!.Healthcheck?.Test[0] === "CMD" ? inspected!.Healthcheck.Test.slice(1) : [],
      exposed: Object.keys(Config.ExposedPorts)
        .map((port) => Number.parseInt(port, 10))
        .sort((a, b) => a - b),
      volumes: Object.keys(Config.Volumes),
    },
  };
}

/** One plain HTTP request; unlike fetch, it may set Host. */
function get(url: string, init: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: init.method ?? "GET", headers: init.headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode!, body }));
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

function commandExists(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
