import { defineConfig } from "vitest/config";

// The dashboard in a real browser: Debian's chromium driven by playwright-core (no browser
// download). Kept out of the unit suite (it starts a browser); .ci/run runs it with
// `npm run test:ui`, which builds the page first. Without chromium it skips with a message,
// unless STANDIN_REQUIRE_BROWSER=1 (set by .ci/run), when a missing browser fails it.
export default defineConfig({
  test: {
    include: ["test/ui-browser/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    fileParallelism: false,
    reporters: ["default", "json"],
    outputFile: { json: "test-results/ui.json" },
  },
});
