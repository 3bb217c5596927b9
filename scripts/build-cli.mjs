#!/usr/bin/env node
// Part of `npm run build`: the command line bundled into one CommonJS script,
// dist/bundle/standin.cjs, dependencies included, which bin/standin runs with V8's code cache
// (src/code-cache.ts; dist/cli.js, the same code, when the bundle is missing or older). A dynamic import() becomes
// a require() of a module esbuild initializes on first use, so what `standin start` does not run
// before its first request (the HCL parser, TLS certificates, …) is compiled from the cache
// but not run. The library's entry points (dist/index.js and the test helpers) are not bundled:
// a consumer's bundler and node_modules deal with those.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { nameBundleContent, ROOT, SHARED_BUNDLE_OPTIONS } from "./bundle-options.mjs";

const out = join(ROOT, "dist/bundle");
const script = join(out, "standin.cjs");
rmSync(out, { recursive: true, force: true });
await build({
  ...SHARED_BUNDLE_OPTIONS,
  entryPoints: [join(ROOT, "src/cli.ts")],
  outfile: script,
  format: "cjs",
  supported: { "dynamic-import": false },
  // src/package-files.ts finds the package's files from its module's URL: in the bundle, the bundle's own.
  define: { "import.meta.url": "__standinBundleUrl" },
  banner: { js: 'const __standinBundleUrl=require("node:url").pathToFileURL(__filename).href;' },
});

nameBundleContent(script);

// The document checker's worker thread (src/control/document-worker.ts looks for it beside the
// module that starts it, here the bundle): one ES module script of its own, as dist/'s is.
await build({
  ...SHARED_BUNDLE_OPTIONS,
  entryPoints: [join(ROOT, "src/control/document-worker-thread.ts")],
  outfile: join(out, "document-worker-thread.js"),
  format: "esm",
});
