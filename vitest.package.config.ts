import { defineConfig } from "vitest/config";

// The packaging suite: the npm tarball and a git URL installed into scratch consumer projects, and
// the single executable run with no node on PATH, and the container image run from its root file
// system. Slow (packs, installs, builds), so it is kept
// out of the unit suite; .ci/run runs it after the conformance suite.
export default defineConfig({
  test: {
    include: ["test/package/**/*.test.ts"],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    // One at a time: each file packs, installs or builds, and the machine may have two cores.
    fileParallelism: false,
    reporters: ["default", "json"],
    outputFile: { json: "test-results/package.json" },
  },
});
