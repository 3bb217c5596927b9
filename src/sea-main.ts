/**
 * The single executable's entry point. scripts/build-exe.mjs bundles this file
 * and everything it imports into one CommonJS script and embeds it, with the
 * package's own files (package.json, fixtures/, keys/, the dashboard's page) as assets, into a copy
 * of the node binary. Those files are read from the assets, since the
 * executable has no package directory beside it; then it is `standin`.
 *
 * Not part of the npm package's build (tsconfig.build.json leaves it out):
 * `node:sea` works only inside a single executable.
 */
import { getAsset } from "node:sea";
import { main } from "./cli.js";
import { documentWorker } from "./control/document-worker.js";
import { readPackageFilesFrom } from "./package-files.js";

/** The asset the build writes: the paths of all the other assets. */
const ASSET_LIST = "assets.json";
/** The asset the build writes: src/control/document-worker-thread.ts and what it imports, as one CommonJS script. */
const DOCUMENT_WORKER_ASSET = "document-worker.cjs";

const embedded = JSON.parse(getAsset(ASSET_LIST, "utf8")) as string[];

readPackageFilesFrom({
  read(relativePath) {
    if (!embedded.includes(relativePath)) {
      throw Object.assign(new Error(`ENOENT: ${relativePath} is not embedded in this executable`), { code: "ENOENT" });
    }
    return getAsset(relativePath, "utf8");
  },
  list(relativeDirectory) {
    const prefix = `${relativeDirectory}/`;
    return embedded.filter((path) => path.startsWith(prefix) && !path.slice(prefix.length).includes("/")).map((path) => path.slice(prefix.length));
  },
});

// The document checker's thread, bundled apart by the build: there is no script file beside this one to start.
void documentWorker.useScript({ source: getAsset(DOCUMENT_WORKER_ASSET, "utf8") });

// As bin/standin: a failure that is not a CliFailure is a bug, and its stack is wanted.
void main();
