/**
 * A container runtime small enough to read, for the container test: runs an
 * image's root file system and configuration as docker or podman would,
 * with the kernel's own pieces (needs root, `ip` and util-linux's `unshare`
 * and `nsenter`):
 * - a network namespace of its own, joined to this machine by a veth pair
 *   (a /30 in 198.18.0.0/15, the range set aside for tests), so the
 *   container's ports are reached at its address as on a container network;
 * - a mount and a PID namespace: /proc, a /dev with the usual devices, and
 *   the bind-mounted volumes, then the root changed to the file system;
 * - the entrypoint run as the image's USER in its WORKDIR with its ENV, as
 *   PID 1; `exec` runs another command inside it, as `docker exec` does.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { ImageConfig } from "./containerfile.js";
import { run, type Finished } from "./support.js";

/** docker's PATH when the image sets none. */
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const DEVICES = ["null", "zero", "full", "random", "urandom"];

/**
 * Run inside the new namespaces, before the image's process: the mounts a runtime makes,
 * then the root, directory and user changed and the entrypoint exec'd (it keeps the PID).
 */
const SETUP = `set -eu
rootfs=$1 workdir=$2 uid=$3 gid=$4 volumes=$5; shift 5
mount --make-rprivate /
mount -t proc proc "$rootfs/proc"
mount -t tmpfs -o mode=755,nosuid tmpfs "$rootfs/dev"
for device in ${DEVICES.join(" ")}; do touch "$rootfs/dev/$device"; mount --bind "/dev/$device" "$rootfs/dev/$device"; done
for volume in $volumes; do mount --bind "\${volume%%:*}" "$rootfs\${volume#*:}"; done
exec unshare --root="$rootfs" --wd="$workdir" --setgid="$gid" --setuid="$uid" -- "$@"`;

/** Why this machine cannot run a container here, or undefined when it can. */
export function unavailable(): string | undefined {
  if (process.platform !== "linux") return `not Linux (${process.platform})`;
  if (process.getuid?.() !== 0) return "not root: namespaces, veth and mounts need root (CI runs as root)";
  for (const tool of ["ip", "unshare", "nsenter", "mount"]) {
    try {
      execFileSync("sh", ["-c", `command -v ${tool}`], { stdio: "ignore" });
    } catch {
      return `no ${tool} on PATH`;
    }
  }
  return undefined;
}

export class Network {
  readonly name: string;
  /** The container's address, reached from this machine through the veth pair. */
  readonly containerAddress: string;
  private readonly hostSide: string;
  private readonly hostAddress: string;

  constructor(tag: number) {
    this.name = `standin-test-${tag}`;
    this.hostSide = `sti${tag % 1_000_000_000}`.slice(0, 15);
    const third = (tag >> 6) % 256;
    const fourth = (tag % 64) * 4;
    this.hostAddress = `198.18.${third}.${fourth + 1}`;
    this.containerAddress = `198.18.${third}.${fourth + 2}`;
  }

  create(): void {
    this.remove();
    const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
    ip("netns", "add", this.name);
    ip("-n", this.name, "link", "set", "lo", "up");
    ip("link", "add", this.hostSide, "type", "veth", "peer", "name", "eth0", "netns", this.name);
    ip("addr", "add", `${this.hostAddress}/30`, "dev", this.hostSide);
    ip("link", "set", this.hostSide, "up");
    ip("-n", this.name, "addr", "add", `${this.containerAddress}/30`, "dev", "eth0");
    ip("-n", this.name, "link", "set", "eth0", "up");
  }

  /** Removing the namespace removes the veth pair with it. */
  remove(): void {
    try {
      execFileSync("ip", ["netns", "del", this.name], { stdio: "ignore" });
    } catch {
      // It was not there.
    }
  }
}

export interface RunOptions {
  /** Replaces the image's CMD, as arguments after the image name do. */
  args?: string[];
  /** `host path` → `container path`, as `-v host:container`. */
  volumes?: Record<string, string>;
}

export class Container {
  private readonly child: ChildProcess;
  private output = "";
  readonly exited: Promise<number | null>;
  private gone = false;

  constructor(
    network: Network,
    private readonly rootfs: string,
    private readonly config: ImageConfig,
    options: RunOptions = {},
  ) {
    // The mount points a runtime provides.
    for (const point of ["proc", "dev", ...Object.values(options.volumes ?? {})]) mkdirSync(join(rootfs, point), { recursive: true });
    const [uid, gid] = config.user.split(":") as [string, string];
    const volumes = Object.entries(options.volumes ?? {})
      .map(([host, inside]) => `${host}:${inside}`)
      .join(" ");
    const command = [...config.entrypoint, ...(options.args ?? config.cmd)];
    this.child = spawn(
      "ip",
      [
        "netns",
        "exec",
        network.name,
        "unshare",
        "--mount",
        "--pid",
        "--fork",
        "--kill-child",
        "--",
        "sh",
        "-c",
        SETUP,
        "setup",
        rootfs,
        config.workdir,
        uid,
        gid,
        volumes,
        ...command,
      ],
      { env: this.environment(), stdio: ["ignore", "pipe", "pipe"] },
    );
    this.child.stdout!.on("data", (d) => (this.output += d));
    this.child.stderr!.on("data", (d) => (this.output += d));
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
    void this.exited.then(() => (this.gone = true));
  }

  /** What the container printed so far. */
  logs(): string {
    return this.output;
  }

  /** The host's PID of the container's PID 1 (the image's process, once the setup has exec'd it). */
  async pid(): Promise<number> {
    const unsharePid = this.child.pid!;
    for (let look = 0; look < 600; look++) {
      if (this.gone) throw new Error(`the container exited: ${this.output}`);
      const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, "utf8").trim();
      if (children !== "") {
        const pid = Number(children.split(" ")[0]);
        // Still the setup shell until it execs the entrypoint (through unshare).
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] === this.config.entrypoint[0]) return pid;
      }
      await sleep(50);
    }
    throw new Error(`the entrypoint never started: ${this.output}`);
  }

  /** `docker exec`: `command` in the container's namespaces and root, as its user, to its end. */
  async exec(command: string[]): Promise<Finished> {
    const pid = await this.pid();
    const [uid, gid] = this.config.user.split(":") as [string, string];
    const inside = ["--root", this.rootfs, "--wd", this.config.workdir, "--setgid", gid, "--setuid", uid, "--", ...command];
    return run("nsenter", ["--target", String(pid), "--mount", "--pid", "--net", "--", "unshare", ...inside], { cwd: "/", env: this.environment() });
  }

  /** `docker stop`: SIGTERM to PID 1; resolves with the exit code. */
  async stop(): Promise<number | null> {
    process.kill(await this.pid(), "SIGTERM");
    return this.exited;
  }

  kill(): void {
    if (!this.gone) this.child.kill("SIGKILL");
  }

  private environment(): NodeJS.ProcessEnv {
    const home = existsSync(join(this.rootfs, "etc/passwd")) ? homeOf(readFileSync(join(this.rootfs, "etc/passwd"), "utf8"), this.config.user.split(":")[0]!) : "/";
    return { PATH: DEFAULT_PATH, HOSTNAME: "standin", HOME: home, ...this.config.env };
  }
}

/** The home directory passwd gives `uid`, or `/`, as docker sets HOME. */
function homeOf(passwd: string, uid: string): string {
  for (const line of passwd.split("\n")) {
    const fields = line.split(":");
    if (fields[2] === uid && fields[5]) return fields[5];
  }
  return "/";
}
