/**
 * container/Containerfile read as a builder reads it, for the container test:
 * its COPY lines laid out into a root file system, and the configuration the
 * image gets (ENTRYPOINT, CMD, USER, WORKDIR, ENV, HEALTHCHECK, EXPOSE,
 * VOLUME). Only the forms the file uses are understood; any other
 * instruction or form is an error, so the file cannot grow a line this test
 * would silently skip and the image and the tested tree cannot drift apart.
 */
import { chownSync, cpSync, lstatSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/** The configuration an image built from the file runs with (what `podman image inspect` shows). */
export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  /** `uid:gid`, numeric. */
  user: string;
  workdir: string;
  env: Record<string, string>;
  healthcheck: string[];
  /** Ascending. */
  exposed: number[];
  volumes: string[];
}

interface Copy {
  from: string;
  to: string;
}

export interface Containerfile {
  base: string;
  copies: Copy[];
  config: ImageConfig;
}

export function parseContainerfile(text: string): Containerfile {
  const copies: Copy[] = [];
  const config: ImageConfig = { entrypoint: [], cmd: [], user: "0:0", workdir: "/", env: {}, healthcheck: [], exposed: [], volumes: [] };
  let base: string | undefined;
  for (const [instruction, rest] of instructions(text)) {
    switch (instruction) {
      case "FROM":
        base = rest;
        break;
      case "COPY": {
        const parts = rest.split(/\s+/);
        if (parts.length !== 2 || parts.some((p) => p.startsWith("--"))) throw new Error(`COPY ${rest}: only "COPY <source> <destination>" is understood`);
        copies.push({ from: parts[0]!, to: parts[1]! });
        break;
      }
      case "ENV": {
        const match = /^([A-Za-z_][A-Za-z0-9_]*)=(\S+)$/.exec(rest);
        if (!match) throw new Error(`ENV ${rest}: only "ENV NAME=value" is understood`);
        config.env[match[1]!] = match[2]!;
        break;
      }
      case "USER":
        if (!/^\d+:\d+$/.test(rest)) throw new Error(`USER ${rest}: only a numeric uid:gid is understood`);
        config.user = rest;
        break;
      case "WORKDIR":
        config.workdir = rest;
        break;
      case "VOLUME":
        config.volumes.push(...execForm(rest));
        break;
      case "EXPOSE":
        config.exposed = [...config.exposed, ...rest.split(/\s+/).map(Number)].sort((a, b) => a - b);
        break;
      case "HEALTHCHECK": {
        const match = /^(?:--[a-z-]+=\S+\s+)*CMD\s+(\[.*\])$/.exec(rest);
        if (!match) throw new Error(`HEALTHCHECK ${rest}: only options and an exec-form CMD are understood`);
        config.healthcheck = execForm(match[1]!);
        break;
      }
      case "ENTRYPOINT":
        config.entrypoint = execForm(rest);
        break;
      case "CMD":
        config.cmd = execForm(rest);
        break;
      default:
        throw new Error(`${instruction}: not an instruction this test understands`);
    }
  }
  if (base === undefined) throw new Error("no FROM");
  return { base, copies, config };
}

/**
 * Lays out the COPY lines from `context` into the empty directory `rootfs`, as a
 * builder does: a directory source copies its contents, a file source becomes
 * the destination path; files keep their modes and belong to root.
 */
export function layOut(file: Containerfile, context: string, rootfs: string): void {
  if (file.base !== "scratch") throw new Error(`FROM ${file.base}: only an empty base can be laid out here`);
  for (const { from, to } of file.copies) {
    const source = join(context, from);
    const target = join(rootfs, to);
    if (statSync(source).isDirectory()) {
      mkdirSync(target, { recursive: true });
      cpSync(source, target, { recursive: true, preserveTimestamps: true });
    } else {
      mkdirSync(dirname(target), { recursive: true });
      cpSync(source, target, { preserveTimestamps: true });
    }
  }
  ownedByRoot(rootfs);
  // A builder creates the WORKDIR and VOLUME directories when the base lacks them.
  for (const directory of [file.config.workdir, ...file.config.volumes]) mkdirSync(join(rootfs, directory), { recursive: true });
}

/** Every path under `rootfs` with its type and mode, sorted: `d 1777 /tmp`, `f 0755 /usr/local/bin/standin`. */
export function listing(rootfs: string, under = ""): string[] {
  const lines: string[] = [];
  for (const name of readdirSync(join(rootfs, under)).sort()) {
    const path = `${under}/${name}`;
    const stat = lstatSync(join(rootfs, path));
    const kind = stat.isDirectory() ? "d" : stat.isSymbolicLink() ? "l" : "f";
    lines.push(`${kind} ${(stat.mode & 0o7777).toString(8).padStart(4, "0")} ${path}`);
    if (stat.isDirectory()) lines.push(...listing(rootfs, path));
  }
  return lines;
}

/** The instructions of a Containerfile: comments and blank lines dropped, `\` continuations joined. */
function instructions(text: string): [string, string][] {
  const joined = text
    .split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .join("\n")
    .replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "")
    .map((line) => {
      const space = line.search(/\s/);
      return [line.slice(0, space).toUpperCase(), line.slice(space).trim()];
    });
}

function execForm(text: string): string[] {
  const value: unknown = JSON.parse(text);
  if (!Array.isArray(value) || !value.every((part) => typeof part === "string")) throw new Error(`${text}: not an exec-form JSON array`);
  return value as string[];
}

function ownedByRoot(path: string): void {
  chownSync(path, 0, 0);
  if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) ownedByRoot(join(path, name));
}
