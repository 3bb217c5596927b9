// Example: vitest with standin. The ready-made setup file starts one emulator per
// worker (on free ports), sets NOMAD_ADDR / CONSUL_HTTP_ADDR / STANDIN_*_URL, and
// resets it before every test. STANDIN_FIXTURE (a JSON file) picks the start fixture.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.mjs"],
    setupFiles: ["standin/vitest/setup"],
  },
});
