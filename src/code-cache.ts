/**
 * Runs the command line's CommonJS bundle compiled with V8's code cache: the
 * npm package's (dist/bundle/standin.cjs, which bin/standin runs) and the
 * single executable's (embedded by scripts/build-exe.mjs, run by
 * src/sea-loader.ts). Node 20's loaders keep no code cache, and parsing and
 * compiling 1.6 MB of JavaScript is most of what start-up costs beyond a bare
 * node process; start-up is what a test suite pays once per package.
 *
 * The cache is written at the first run's exit, so it holds everything that
 * run compiled (the start-up path and its first requests, not only the
 * top level), to a directory of the user's own under the system's temporary
 * one (STANDIN_COMPILE_CACHE: another directory, or `off`), one file per node
 * version, bundle and command. A cache V8 refuses (another node, a torn file)
 * only costs that start its compile, and is written anew at its exit. What
 * the bundle does is the same with or without a cache.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Script } from "node:vm";

/** The first line of a bundle, naming its content (scripts/bundle-options.mjs writes it). */
const CONTENT_LINE = /^\/\/ standin bundle ([0-9a-f]+)\n/;

export interface CommonJsBundle {
  /** The bundle's text, its first line naming its content. */
  readonly source: string;
  /** Its path (stack traces name it; `__filename` in it). */
  readonly filename: string;
  readonly dirname: string;
  /** What `require` is inside it (node's own modules: its dependencies are bundled in). */
  readonly require: NodeJS.Require;
}

/** Runs the bundle as node's CommonJS loader would and returns its exports. */
export function runWithCodeCache(bundle: CommonJsBundle, environment: NodeJS.ProcessEnv = process.env, command = process.argv[2]): Record<string, unknown> {
  const cacheFile = codeCacheFile(bundle.source, environment, command);
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile) cachedData = readFileSync(cacheFile);
  } catch {
    // No cache yet: this run writes it.
  }
  // The wrapper node's CommonJS loader puts around a module.
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${bundle.source}\n})`, { filename: bundle.filename, cachedData });
  if (cacheFile && (cachedData === undefined || script.cachedDataRejected)) process.once("exit", () => writeCodeCache(cacheFile, script));
  const module = { exports: {} as Record<string, unknown> };
  (script.runInThisContext() as (...args: unknown[]) => void)(module.exports, bundle.require, module, bundle.filename, bundle.dirname);
  return module.exports;
}

/** The cache's file for this node, this bundle and this command, in a directory only this user can write; undefined: no cache. */
function codeCacheFile(source: string, environment: NodeJS.ProcessEnv, command: string | undefined): string | undefined {
  const setting = environment["STANDIN_COMPILE_CACHE"];
  const content = CONTENT_LINE.exec(source)?.[1];
  if (setting === "off" || !content) return undefined;
  try {
    const user = process.getuid?.();
    const directory = setting || join(tmpdir(), `standin-compile-cache-${user ?? "user"}`);
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    // Another user's directory under the shared temporary one is not to be trusted with code.
    if (user !== undefined && statSync(directory).uid !== user) return undefined;
    const name = command && /^[a-z][a-z-]*$/.test(command) ? command : "other";
    return join(directory, `${process.version}-${process.arch}-${content}-${name}.bin`);
  } catch {
    return undefined;
  }
}

/** Written whole under a temporary name, then renamed: a concurrent start reads the old file or the new one. */
function writeCodeCache(file: string, script: Script): void {
  try {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, script.createCachedData());
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written only costs the next start its compile.
  }
}
