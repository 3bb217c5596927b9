/**
 * Test-runner hooks registered by hand and run by the test itself, so a test
 * can walk `useStandinWith`'s lifecycle (before-all, before-each, after-all)
 * step by step.
 */
import type { RunnerHooks } from "../../src/testing/shared.js";

export function manualHooks() {
  const registered: Record<"beforeAll" | "beforeEach" | "afterAll", Array<() => Promise<void>>> = { beforeAll: [], beforeEach: [], afterAll: [] };
  const hooks: RunnerHooks = {
    name: "manual",
    beforeAll: (fn) => void registered.beforeAll.push(fn),
    beforeEach: (fn) => void registered.beforeEach.push(fn),
    afterAll: (fn) => void registered.afterAll.push(fn),
  };
  const run = async (kind: keyof typeof registered) => {
    for (const fn of registered[kind]) await fn();
  };
  return { hooks, run };
}
