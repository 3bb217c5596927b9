/**
 * The fixtures shipped with standin (fixtures/<name>.json), by name: wherever
 * a fixture file is taken (`--fixture`, `createStandin({ fixture })`,
 * `STANDIN_FIXTURE`, `fixtures check`), a bare name such as `default` or
 * `token-expiry` means the shipped file, so it resolves the same from a
 * consumer's project, a clone or the single executable.
 */
import { resolve } from "node:path";
import { listPackageFiles, packageRoot, readPackageFile } from "../package-files.js";

const DIRECTORY = "fixtures";

/**
 * A bare name: letters, digits, `-` and `_` only. Anything with a `/`, `\` or
 * `.` is a path, so `./world` still names a file in the working directory.
 */
export function isFixtureName(value: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(value);
}

/**
 * What a fixture reference given as text (`--fixture`, `STANDIN_FIXTURE`)
 * means, made independent of the working directory: a bare name stays a
 * name (the loader reads the shipped file, or fails listing the names), a
 * path becomes absolute. One resolver for the CLI and the test helpers, so
 * a value that works in one works in the other.
 */
export function fixtureReference(value: string): string {
  return isFixtureName(value) ? value : resolve(value);
}

/** The names of the shipped fixtures, sorted. */
export function shippedFixtureNames(): string[] {
  return listPackageFiles(DIRECTORY)
    .filter((file) => file.endsWith(".json"))
    .map((file) => file.slice(0, -".json".length))
    .sort();
}

/** A shipped fixture's text, or undefined when there is none by that name. */
export function readShippedFixture(name: string): string | undefined {
  if (!isFixtureName(name) || !shippedFixtureNames().includes(name)) return undefined;
  return readPackageFile(`${DIRECTORY}/${name}.json`);
}

/**
 * The absolute path of a shipped fixture in the installed package, for tools
 * that want the file itself; standin's own options take the bare name.
 */
export function shippedFixturePath(name: string): string {
  if (!isFixtureName(name) || !shippedFixtureNames().includes(name)) {
    throw new Error(`no shipped fixture named "${name}" (shipped: ${shippedFixtureNames().join(", ")})`);
  }
  return resolve(packageRoot(), DIRECTORY, `${name}.json`);
}
