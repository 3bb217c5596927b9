/**
 * Route coverage (`GET /_standin/coverage`) as the coverage tests read it: a
 * set of routes is listed as emulated (not yet hit at start, never under
 * `unemulated`), and one call moves a route to `hit`.
 */
import { expect } from "vitest";
import type { Standin } from "../../src/emulator.js";

export type Route = { method: string; route: string };
type ServiceCoverage = { hit: Array<Route & { count: number }>; notHit: Route[]; unemulated: Route[] };

export async function coverageOf(emu: Standin, service: "scheduler" | "registry"): Promise<ServiceCoverage> {
  return ((await (await emu.scheduler.request("/_standin/coverage")).json()) as Record<string, ServiceCoverage>)[service]!;
}

/** Every route emulated and not yet hit; then `call` hits `called`, which moves to `hit` with a count of 1. */
export async function expectEmulatedAndCounted(
  emu: Standin,
  service: "scheduler" | "registry",
  routes: readonly Route[],
  called: Route,
  call: () => Promise<Response>,
): Promise<void> {
  const before = await coverageOf(emu, service);
  for (const route of routes) {
    expect(before.unemulated, `${route.method} ${route.route}`).not.toContainEqual(route);
    expect(before.notHit, `${route.method} ${route.route}`).toContainEqual(route);
  }
  expect((await call()).status).toBe(200);
  const after = await coverageOf(emu, service);
  expect(after.hit).toContainEqual({ ...called, count: 1 });
  expect(after.notHit).not.toContainEqual(called);
}
