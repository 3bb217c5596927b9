/**
 * `standin/node-test`: the same as `standin/vitest`, for `node --test`.
 *
 * ```js
 * import { useStandin } from "standin/node-test";
 * const standin = useStandin();            // top level of the test file
 * test("…", async () => { standin.advance("30s"); });
 * ```
 *
 * `before` starts the emulator on free ports (or the `ports` given; then one
 * test file at a time, `--test-concurrency=1`) and sets the environment
 * variables, `beforeEach` resets it, `after` closes it. (`node --test` runs
 * each file in its own process, so each file gets its own emulator.)
 */
import { after, before, beforeEach } from "node:test";
import { useStandinWith, type StandinHandle, type UseStandinOptions } from "./shared.js";

export type { StandinHandle, UseStandinOptions } from "./shared.js";
export { environmentFor } from "./shared.js";

/** Registers node:test hooks that run an emulator for the tests of this file (or describe block). */
export function useStandin(options: UseStandinOptions = {}): StandinHandle {
  return useStandinWith(
    {
      name: "node:test",
      beforeAll: (fn) => before(fn),
      beforeEach: (fn) => beforeEach(fn),
      afterAll: (fn) => after(fn),
    },
    options,
  );
}
