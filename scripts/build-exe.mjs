#!/usr/bin/env node
// `npm run build:exe`: standin as one executable file (build/standin, build/standin.exe on
// Windows) for CI machines without Node: Node's single executable applications. esbuild
// bundles src/sea-main.ts and everything it imports (dependencies included) into one CommonJS
// script, embedded as an asset that the executable's main script (src/sea-loader.ts) runs with
// V8's code cache (src/code-cache.ts); node turns them, with the package's own files (and the
// dashboard's page) as assets (src/package-files.ts reads them), into a blob; postject injects
// the blob into a copy of the node binary running this.
// The executable is for the platform and architecture it was built on.
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { inject } from "postject";
import { nameBundleContent, SHARED_BUNDLE_OPTIONS } from "./bundle-options.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "build");
const work = join(out, "sea");
const executable = join(out, process.platform === "win32" ? "standin.exe" : "standin");

// node:sea's getAsset, which src/sea-main.ts reads the embedded files with, came in Node 20.12.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 12)) {
  console.error(`build:exe needs Node 20.12 or later (this is ${process.version})`);
  process.exit(1);
}

rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

// 1. One CommonJS script (a single executable's main cannot be an ES module), and the main script that runs it.
const script = join(work, "standin.cjs");
await build({
  ...SHARED_BUNDLE_OPTIONS,
  entryPoints: [join(root, "src/sea-main.ts")],
  outfile: script,
  format: "cjs",
  // A single executable has no dynamic import() (node's own modules included, which stay
  // external): esbuild turns every import() into a require(). What start-up does not need
  // still waits in its module's lazy initializer, and the code cache below spares the parse.
  supported: { "dynamic-import": false },
  // import.meta.url is only read when the files come from a package directory, which the
  // executable never does (src/package-files.ts); in CommonJS it is empty, and unused.
  logOverride: { "empty-import-meta": "silent" },
});
nameBundleContent(script);
// The main script: it runs the bundle above, compiled with the code cache.
const loader = join(work, "loader.cjs");
await build({ ...SHARED_BUNDLE_OPTIONS, entryPoints: [join(root, "src/sea-loader.ts")], outfile: loader, format: "cjs" });

// 1b. The document checker's worker thread (src/control/document-worker.ts), one script of its own:
// an executable has no file to start a thread from, so src/sea-main.ts starts it from this source.
const documentWorker = join(work, "document-worker.cjs");
await build({
  ...SHARED_BUNDLE_OPTIONS,
  entryPoints: [join(root, "src/control/document-worker-thread.ts")],
  outfile: documentWorker,
  format: "cjs",
  supported: { "dynamic-import": false },
  logOverride: { "empty-import-meta": "silent" },
});

// 2. The package's own files, embedded as assets under their paths in the package: with the
// dashboard's page (src/ui/assets.ts reads dist/ui-page/), built here so it is never stale.
execFileSync(process.execPath, [join(root, "scripts/build-ui.mjs")], { stdio: "inherit" });
const shipped = [
  "package.json",
  "keys/test-keys.json",
  ...readdirSync(join(root, "fixtures"))
    .filter((f) => f.endsWith(".json"))
    .map((f) => `fixtures/${f}`),
  ...["index.html", "app.js", "app.css"].map((f) => `dist/ui-page/${f}`),
];
const assetList = join(work, "assets.json");
writeFileSync(assetList, JSON.stringify(shipped));
const blob = join(work, "standin.blob");
const seaConfig = join(work, "sea-config.json");
writeFileSync(
  seaConfig,
  JSON.stringify(
    {
      main: loader,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      assets: {
        "assets.json": assetList,
        "standin.cjs": script,
        "document-worker.cjs": documentWorker,
        ...Object.fromEntries(shipped.map((path) => [path, join(root, path)])),
      },
    },
    null,
    2,
  ),
);
execFileSync(process.execPath, ["--experimental-sea-config", seaConfig], { stdio: "inherit" });

// 3. A copy of this node binary with the blob injected.
rmSync(executable, { force: true });
copyFileSync(process.execPath, executable);
chmodSync(executable, 0o755);
if (process.platform === "darwin") execFileSync("codesign", ["--remove-signature", executable]);
await inject(executable, "NODE_SEA_BLOB", readFileSync(blob), {
  sentinelFuse: "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
  ...(process.platform === "darwin" ? { machoSegmentName: "NODE_SEA" } : {}),
});
// macOS runs only signed binaries on Apple silicon: an ad-hoc signature does.
if (process.platform === "darwin") execFileSync("codesign", ["--sign", "-", executable]);

const mib = (file) => (statSync(file).size / 2 ** 20).toFixed(1);
console.log(`${executable}: ${mib(executable)} MiB (node ${process.version} ${process.platform}-${process.arch}; the bundled script ${mib(script)} MiB)`);
