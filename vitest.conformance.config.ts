import { defineConfig } from "vitest/config";

// The conformance suite: real third-party clients (HashiCorp's Go clients, Debian's python3-consul
// and python3-consul2, npm consul) against a running standin. Kept out of the unit suite's time
// budget; .ci/run runs both.
export default defineConfig({
  test: {
    include: ["test/conformance/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 900_000,
    reporters: ["default", "json"],
    outputFile: { json: "test-results/conformance.json" },
  },
});
