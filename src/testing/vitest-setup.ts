/**
 * `standin/vitest/setup`: a ready-made vitest setup file.
 *
 * ```ts
 * export default defineConfig({ test: { setupFiles: ["standin/vitest/setup"] } });
 * ```
 *
 * Runs `useStandin()`: the start fixture is the one `STANDIN_FIXTURE` names when
 * it is set (a file relative to the working directory, or a shipped fixture's
 * name such as `token-expiry`), else the default world.
 * It starts the emulator right away (top-level await), so the environment
 * variables are already set while the test files are imported; a test file's
 * own `useStandin()` with no options shares that emulator.
 */
import { useStandin } from "./vitest.js";

await useStandin().start();
