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
import { readPackageFilesFrom } from "./package-files.js";

/** The asset the build writes: the paths of all the other assets. */
const ASSET_LIST = "assets.json";

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

// As bin/standin: a failure that is not a CliFailure is a bug, and its stack is wanted.
void main();
