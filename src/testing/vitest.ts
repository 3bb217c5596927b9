/**
 * `standin/vitest`: one emulator per vitest worker, on free ports (or the
 * `ports` given: `useStandin({ ports: { scheduler: 4646 } })`; then one test
 * file at a time, `fileParallelism: false`).
 *
 * ```ts
 * // vitest.config.ts: test: { setupFiles: ["standin/vitest/setup"] }   (or a setup file of your own:)
 * import { useStandin } from "standin/vitest";
 * export const standin = useStandin({ fixture: "fixtures/world.json" });
 * ```
 *
 * `beforeAll` starts it (or reuses the one this worker already runs with the
 * same options) and sets `NOMAD_ADDR`, `CONSUL_HTTP_ADDR`, `STANDIN_*_URL`;
 * `beforeEach` resets it to the start state; `afterAll` closes it once its
 * last user in the worker is done.
 */
import { afterAll, beforeAll, beforeEach } from "vitest";
import { useStandinWith, type StandinHandle, type UseStandinOptions } from "./shared.js";

export type { StandinHandle, UseStandinOptions } from "./shared.js";
export { environmentFor } from "./shared.js";

/** Registers vitest hooks that run an emulator for the tests of this file (or setup file); see the module comment. */
export function useStandin(options: UseStandinOptions = {}): StandinHandle {
  return useStandinWith({ name: "vitest", beforeAll, beforeEach, afterAll }, options);
}
