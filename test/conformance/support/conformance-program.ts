/**
 * The conformance program (test/conformance/go: named checks through
 * HashiCorp's official Go clients), as each test file that runs it builds
 * it: to a binary of its own name, since test files build side by side.
 */
import { resolve } from "node:path";
import { type GoProgram, PROJECT_ROOT, SHARED } from "./go-build.js";

export function conformanceProgram(what: string, binaryName: string): GoProgram {
  return {
    what,
    source: resolve(PROJECT_ROOT, "test/conformance/go"),
    gopath: [resolve(SHARED, "go-clients/gopath")],
    binary: resolve(PROJECT_ROOT, "node_modules/.cache/standin-conformance", binaryName),
  };
}
