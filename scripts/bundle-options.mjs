// The esbuild options both bundles of the command line share: the npm package's (scripts/build-cli.mjs,
// dist/bundle/, which bin/standin loads) and the single executable's (scripts/build-exe.mjs). One
// file of JavaScript parses and compiles in a fraction of the time node takes to find, read and
// link the ~370 modules of dist/ one by one, and start-up is what a test suite pays per package.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

export const SHARED_BUNDLE_OPTIONS = {
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  // The third-party licences stay with the code they cover.
  legalComments: "eof",
  logLevel: "warning",
};

/**
 * Puts the bundle's content name on its first line, which src/code-cache.ts keys the V8 code
 * cache by without hashing 1.6 MB at every start (V8 itself checks only the source's length).
 */
export function nameBundleContent(file) {
  const code = readFileSync(file, "utf8");
  writeFileSync(file, `// standin bundle ${createHash("sha256").update(code).digest("hex").slice(0, 16)}\n${code}`);
}
