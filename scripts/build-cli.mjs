#!/usr/bin/env node
// Part of `npm run build`: the command line bundled into dist/bundle/ (cli.js and its lazy chunks),
// dependencies included, which bin/standin loads when it is there (dist/cli.js otherwise). Code
// splitting keeps what `standin start` does not run before its first request (the HCL parser,
// TLS certificates, the tape replayer, …) in chunks of their own, read only when a dynamic
// import() reaches them. The library's entry points (dist/index.js and the test helpers) are
// not bundled: a consumer's bundler and node_modules deal with those.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT, SHARED_BUNDLE_OPTIONS } from "./bundle-options.mjs";

const out = join(ROOT, "dist/bundle");
rmSync(out, { recursive: true, force: true });
const result = await build({
  ...SHARED_BUNDLE_OPTIONS,
  entryPoints: { cli: join(ROOT, "src/cli.ts") },
  outdir: out,
  format: "esm",
  splitting: true,
  chunkNames: "[name]-[hash]",
  // commander and yaml are CommonJS, whose require() of node's own modules an ES module has not.
  banner: { js: 'import{createRequire as __standinRequire}from"node:module";const require=__standinRequire(import.meta.url);' },
  metafile: Boolean(process.env.STANDIN_BUNDLE_METAFILE),
});
if (process.env.STANDIN_BUNDLE_METAFILE) {
  const { writeFileSync } = await import("node:fs");
  writeFileSync(process.env.STANDIN_BUNDLE_METAFILE, JSON.stringify(result.metafile));
}
