/**
 * What a recorder test starts (standins, recorders, upstreams, folders),
 * closed after each test, the newest first: one place for the pattern every
 * record-*.test.ts shares.
 */
import { afterEach } from "vitest";
import { startRecorder, type RunningRecorder } from "../../src/parity/record/recorder.js";
import { startStandin, type RunningStandin } from "../../src/server.js";

/** Every service on a port of its own, chosen by the system. */
export const anyPorts = { scheduler: 0, registry: 0, echo: 0 };

export interface Running {
  /** Closes `thing` after the test. */
  keep<T extends { close(): Promise<unknown> }>(thing: T): T;
  /** A standin on any ports, closed after the test. */
  standin(): Promise<RunningStandin>;
  /** A recorder in front of `upstreams` on any ports (not asking the upstreams' versions), closed after the test. */
  recorderFor(upstreams: Record<string, string>): Promise<RunningRecorder>;
}

/** Registers the closing (call at a test file's top level). */
export function closedAfterEach(): Running {
  const running: Array<{ close(): Promise<unknown> }> = [];
  afterEach(async () => {
    for (const thing of running.splice(0).reverse()) await thing.close();
  });
  const keep = <T extends { close(): Promise<unknown> }>(thing: T): T => {
    running.push(thing);
    return thing;
  };
  return {
    keep,
    standin: async () => keep(await startStandin({ ports: anyPorts })),
    recorderFor: async (upstreams) => keep(await startRecorder({ upstreams, ports: anyPorts, readProducts: false })),
  };
}
