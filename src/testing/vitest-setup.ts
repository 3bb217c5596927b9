/**
 * `standin/vitest/setup`: a ready-made vitest setup file.
 *
 * ```ts
 * export default defineConfig({ test: { setupFiles: ["standin/vitest/setup"] } });
 * ```
 *
 * Runs `useStandin()`: the start fixture is the file named by `STANDIN_FIXTURE`
 * when it is set (relative to the working directory), else the default world.
 * It starts the emulator right away (top-level await), so the environment
 * variables are already set while the test files are imported; a test file's
 * own `useStandin()` with no options shares that emulator.
 */
import { useStandin } from "./vitest.js";

await useStandin().start();
