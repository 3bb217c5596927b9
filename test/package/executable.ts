/**
 * The single executable for the packaging tests, built once per set of
 * inputs: `npm run build:exe` bundles src/ with the shipped files into a copy
 * of this node, so a build is reused (from .cache/standin-exe/<key>/) while
 * none of those and not the node version have changed. The executable test
 * and the container test both take it from here, so a run builds it once.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { expect } from "vitest";
import { run } from "./support.js";

const NAME = process.platform === "win32" ? "standin.exe" : "standin";

/** What the executable is made of: the code and page it bundles, the files it embeds, the scripts that build it. */
const INPUTS = ["src", "fixtures", "keys", "package.json", "package-lock.json", "scripts/build-exe.mjs", "scripts/build-ui.mjs"];

/** The path of an executable built from the working tree as it is now (building it if no cached one matches). */
export async function builtExecutable(root: string): Promise<string> {
  const cacheRoot = join(root, ".cache", "standin-exe");
  const cached = join(cacheRoot, inputsKey(root), NAME);
  if (existsSync(cached)) return cached;
  const build = await run("npm", ["run", "build:exe"], { cwd: root });
  expect(build, build.stderr).toMatchObject({ code: 0 });
  // Only the newest build is kept: each is about 100 MB.
  rmSync(cacheRoot, { recursive: true, force: true });
  mkdirSync(join(cached, ".."), { recursive: true });
  copyFileSync(join(root, "build", NAME), `${cached}.partial`);
  renameSync(`${cached}.partial`, cached);
  return cached;
}

function inputsKey(root: string): string {
  const hash = createHash("sha256").update(`${process.version} ${process.platform} ${process.arch}\n`);
  for (const file of INPUTS.flatMap((input) => filesUnder(root, input)).sort()) {
    hash.update(`${relative(root, file)}\n`).update(readFileSync(file));
  }
  return hash.digest("hex").slice(0, 16);
}

function filesUnder(root: string, input: string): string[] {
  const path = join(root, input);
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}
