#!/usr/bin/env node
// Part of `npm run build`: the dashboard's page (src/ui/client/) into dist/ui-page/: its TypeScript
// bundled by esbuild into one minified script, its HTML and style sheet copied. The package ships
// them (dist/), and scripts/build-exe.mjs embeds them in the single executable. The script must
// stay within its budget (test/ui/bundle.test.ts checks it too): the page is loaded by people
// opening a CI run's dashboard, often over a slow tunnel.
import { copyFileSync, mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const SCRIPT_BUDGET_BYTES = 100 * 1024;

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(root, "src/ui/client");
const out = join(root, "dist/ui-page");
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(source, "main.ts")],
  outfile: join(out, "app.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
for (const file of ["index.html", "app.css"]) copyFileSync(join(source, file), join(out, file));
const bytes = statSync(join(out, "app.js")).size;
if (bytes > SCRIPT_BUDGET_BYTES) {
  console.error(`dist/ui-page/app.js is ${bytes} bytes, over its budget of ${SCRIPT_BUDGET_BYTES}`);
  process.exit(1);
}
