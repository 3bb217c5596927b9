import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // The conformance, packaging and browser suites have their own runs (vitest.conformance.config.ts, vitest.package.config.ts, vitest.ui.config.ts).
    exclude: ["test/conformance/**", "test/package/**", "test/ui-browser/**", "**/node_modules/**"],
    // One module graph per worker, not one per file: importing src/ anew for each of ~130 files was a third of
    // the suite's time. Tests build their own emulators (createStandin), so no state is shared through modules.
    isolate: false,
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // The JSON report lets .ci/run print a plain "N passed, N failed" summary line.
    reporters: ["default", "json"],
    outputFile: { json: "test-results/vitest.json" },
  },
});
