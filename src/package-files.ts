/**
 * The files shipped beside the code (package.json, fixtures/, keys/), read
 * through this one door. From the npm package or a clone they are files under
 * the package root; the single executable (scripts/build-exe.mjs) has no
 * package directory, and its entry point (src/sea-main.ts) points this module
 * at the assets embedded in the executable instead.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the shipped files come from; paths are relative to the package root, with `/`. */
export interface PackageFileSource {
  /** The file's text; throws (with `code: "ENOENT"`) when there is no such file. */
  read(relativePath: string): string;
  /** The names of the files directly in a directory. */
  list(relativeDirectory: string): string[];
}

let root: string | undefined;

/**
 * The package's root directory. Computed on first use, not at load: the
 * executable's CommonJS bundle has no `import.meta.url`, and never asks.
 */
export function packageRoot(): string {
  root ??= nearestPackageDirectory(dirname(fileURLToPath(import.meta.url)));
  return root;
}

/**
 * The closest directory at or above `start` holding a package.json: src/package-files.ts and
 * dist/package-files.js sit one level below the root, the command line's bundle
 * (dist/bundle/, scripts/build-cli.mjs) two.
 */
function nearestPackageDirectory(start: string): string {
  for (let directory = start; ; directory = dirname(directory)) {
    if (existsSync(resolve(directory, "package.json"))) return directory;
    if (dirname(directory) === directory) return resolve(start, "..");
  }
}

const packageDirectory: PackageFileSource = {
  read: (relativePath) => readFileSync(resolve(packageRoot(), relativePath), "utf8"),
  list: (relativeDirectory) => readdirSync(resolve(packageRoot(), relativeDirectory)),
};

let source: PackageFileSource = packageDirectory;

/** Reads the shipped files from elsewhere from now on (the executable's embedded assets). */
export function readPackageFilesFrom(replacement: PackageFileSource): void {
  source = replacement;
}

export function readPackageFile(relativePath: string): string {
  return source.read(relativePath);
}

export function listPackageFiles(relativeDirectory: string): string[] {
  return source.list(relativeDirectory);
}

let version: string | undefined;

/** package.json's version. */
export function packageVersion(): string {
  version ??= (JSON.parse(readPackageFile("package.json")) as { version: string }).version;
  return version;
}
