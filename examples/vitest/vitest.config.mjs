// Example: vitest with standin. The ready-made setup file starts one emulator per
// worker (on free ports), sets NOMAD_ADDR / CONSUL_HTTP_ADDR / STANDIN_*_URL, and
// resets it before every test. STANDIN_FIXTURE names the start fixture (here a
// two-node cluster); without it, the emulator starts with the default world.
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["**/*.test.mjs"],
    setupFiles: ["standin/vitest/setup"],
    env: { STANDIN_FIXTURE: fileURLToPath(new URL("./fixture.json", import.meta.url)) },
  },
});
