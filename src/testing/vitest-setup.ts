/**
 * `standin/vitest/setup`: a ready-made vitest setup file.
 *
 * ```ts
 * export default defineConfig({ test: { setupFiles: ["standin/vitest/setup"] } });
 * ```
 *
 * Runs `useStandin()` with the fixture named by `STANDIN_FIXTURE` (a file
 * path, relative to the working directory) when it is set, else the default
 * world. It starts the emulator right away (top-level await), so the
 * environment variables are already set while the test files are imported.
 */
import { useStandin } from "./vitest.js";

const fixture = process.env.STANDIN_FIXTURE;
await useStandin(fixture ? { fixture } : {}).start();
