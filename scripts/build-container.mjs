#!/usr/bin/env node
// Part of `npm run build:container`: stages the build context of container/Containerfile in
// build/container/ (or --out <dir>) from the single executable (build/standin, or --executable
// <file>): the executable, the Containerfile, and rootfs/ with what an empty base needs for it to
// run: the shared libraries it links (found with `ldd`, copied to the paths its loader looks in),
// a passwd and group file naming the unprivileged user the image runs as, /etc/hosts, and the
// empty /tmp (writable by everyone, as usual) and /fixtures. Linux only: the image is for the
// architecture of the executable, which is the build machine's.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: {
    executable: { type: "string", default: join(root, "build/standin") },
    out: { type: "string", default: join(root, "build/container") },
  },
});
const executable = resolve(values.executable);
const out = resolve(values.out);

// The user the Containerfile's USER line names by number (the distroless images' "nonroot").
const USER_ID = 65532;

if (process.platform !== "linux") fail(`build:container stages a Linux image; this is ${process.platform}`);
if (!existsSync(executable)) fail(`no executable at ${executable}: run npm run build:exe first (npm run build:container does)`);

rmSync(out, { recursive: true, force: true });
const rootfs = join(out, "rootfs");
mkdirSync(rootfs, { recursive: true });

// 1. The executable and the Containerfile, at the top of the context.
copyFileSync(executable, join(out, "standin"));
chmodSync(join(out, "standin"), 0o755);
copyFileSync(join(root, "container/Containerfile"), join(out, "Containerfile"));

// 2. The shared libraries, each at the path ldd resolved it to (the loader at the path compiled
// into the executable), copied as files: a symlink's target would be missing from the image.
const libraries = sharedLibraries(executable);
for (const library of libraries) {
  const target = join(rootfs, library);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(library, target);
  chmodSync(target, 0o755);
}

// 3. The few files a process expects to find: who it runs as, and that localhost is itself
// (container runtimes mount their own /etc/hosts over this one).
mkdirSync(join(rootfs, "etc"));
writeFileSync(join(rootfs, "etc/passwd"), `root:x:0:0:root:/root:/sbin/nologin\nstandin:x:${USER_ID}:${USER_ID}:standin:/tmp:/sbin/nologin\n`);
writeFileSync(join(rootfs, "etc/group"), `root:x:0:\nstandin:x:${USER_ID}:\n`);
writeFileSync(join(rootfs, "etc/hosts"), "127.0.0.1\tlocalhost\n::1\tlocalhost\n");
for (const empty of ["tmp", "fixtures"]) mkdirSync(join(rootfs, empty));
chmodSync(join(rootfs, "tmp"), 0o1777);
chmodSync(join(rootfs, "fixtures"), 0o755);

const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
const libraryBytes = libraries.reduce((sum, library) => sum + statSync(library).size, 0);
console.log(
  `${out}: the executable (${mib(statSync(executable).size)} MiB) and ${libraries.length} libraries (${mib(libraryBytes)} MiB: ${libraries.join(", ")}); build the image with: podman build -t standin ${out}`,
);

/** The absolute paths of the libraries `ldd` lists for `file`, the loader among them. */
function sharedLibraries(file) {
  let listing;
  try {
    listing = execFileSync("ldd", [file], { encoding: "utf8" });
  } catch (error) {
    fail(`ldd ${file} failed (${error.message.split("\n")[0]}): build:container needs glibc's ldd`);
  }
  const paths = [];
  for (const line of listing.split("\n")) {
    // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)", "/lib64/ld-linux-x86-64.so.2 (0x…)";
    // the kernel's linux-vdso.so.1 has no file.
    if (/=>\s*not found/.test(line)) fail(`ldd ${file}: ${line.trim()}`);
    const match = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (match && isAbsolute(match[1])) paths.push(match[1]);
  }
  if (paths.length === 0) fail(`ldd ${file} listed no libraries:\n${listing}`);
  return paths;
}

function fail(message) {
  console.error(`build:container: ${message}`);
  process.exit(1);
}
