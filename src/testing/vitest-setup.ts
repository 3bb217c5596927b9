/**
 * `standin/vitest/setup`: a ready-made vitest setup file.
 *
 * ```ts
 * export default defineConfig({ test: { setupFiles: ["standin/vitest/setup"] } });
 * ```
 *
 * Runs `useStandin()` with the fixture named by `STANDIN_FIXTURE` (a file
 * path, relative to the working directory) when it is set, else the default world.
 */
import { useStandin } from "./vitest.js";

const fixture = process.env.STANDIN_FIXTURE;
useStandin(fixture ? { fixture } : {});
