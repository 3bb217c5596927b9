import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The conformance, packaging and browser suites have their own runs (vitest.conformance.config.ts, vitest.package.config.ts, vitest.ui.config.ts).
    exclude: ["test/conformance/**", "test/package/**", "test/ui-browser/**", "**/node_modules/**"],
    // One module graph per worker, not one per file: importing src/ anew for each of ~130 files was a third of
    // the suite's time. Tests build their own emulators (createStandin), so no state is shared through modules.
    isolate: false,
    // Every core (vitest keeps one back by default): on the 2-core CI machine that is two test files at a time
    // instead of one, 119 s for the suite instead of ~180 s on a quiet machine.
    maxWorkers: availableParallelism(),
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" summary line.
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
  },
});
