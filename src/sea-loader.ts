/**
 * The single executable's main script: it runs the embedded bundle of
 * src/sea-main.ts (the asset `standin.cjs`) compiled with V8's code cache,
 * as bin/standin runs the npm package's (src/code-cache.ts). Node's own
 * `useCodeCache` for a single executable caches only what compiling the main
 * script compiles, not the functions start-up then runs; this cache, written
 * at the first run's exit, holds those too.
 *
 * Not part of the npm package's build: `node:sea` works only inside a single
 * executable (scripts/build-exe.mjs bundles this file).
 */
import { getAsset } from "node:sea";
import { runWithCodeCache } from "./code-cache.js";

/** The asset scripts/build-exe.mjs embeds the bundle of src/sea-main.ts as. */
const BUNDLE_ASSET = "standin.cjs";

// The bundle's dependencies are in it: what it requires is node's own modules, which the
// single executable's `require` gives.
runWithCodeCache({ source: getAsset(BUNDLE_ASSET, "utf8"), filename: BUNDLE_ASSET, dirname: ".", require });
