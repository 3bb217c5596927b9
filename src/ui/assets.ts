/**
 * The dashboard's three files (an HTML page, one script, one style sheet),
 * built by scripts/build-ui.mjs into dist/ui-page/ and shipped with the package
 * (and embedded in the single executable): read through the package-files
 * door once, then served from memory. No CDN, no other request.
 */
import { readPackageFile } from "../package-files.js";

/** Where the build writes them, relative to the package root. */
export const UI_ASSET_DIR = "dist/ui-page";

export const UI_ASSETS = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
} as const;

export type UiAssetName = keyof typeof UI_ASSETS;

const loaded = new Map<UiAssetName, string>();

/** The asset's text; throws when the package was not built (`npm run build` makes them). */
export function uiAsset(name: UiAssetName): string {
  let text = loaded.get(name);
  if (text === undefined) {
    try {
      text = readPackageFile(`${UI_ASSET_DIR}/${name}`);
    } catch (error) {
      throw new Error(`the dashboard's ${name} is missing (${UI_ASSET_DIR}/ is made by npm run build): ${(error as Error).message}`);
    }
    loaded.set(name, text);
  }
  return text;
}

/** The response serving an asset. The page is tiny and changes with the version: never cached stale, always revalidated. */
export function uiAssetResponse(name: UiAssetName): Response {
  return new Response(uiAsset(name), {
    status: 200,
    headers: {
      "Content-Type": UI_ASSETS[name],
      "Cache-Control": "no-cache",
      "X-Content-Type-Options": "nosniff",
      // Everything comes from standin itself: no other origin may be reached, nothing may frame it.
      "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    },
  });
}
