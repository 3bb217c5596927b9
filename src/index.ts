/**
 * standin's public API: create an emulator in process (`createStandin`,
 * no sockets) or on ports (`startStandin`).
 */
export { createStandin, resolveFixtures, Standin, DEFAULT_SEED, DEFAULT_START } from "./emulator.js";
export type { CreateStandinOptions, FixtureSource } from "./emulator.js";
export { startStandin, PortInUseError } from "./server.js";
export type { StartStandinOptions, RunningStandin } from "./server.js";
export { Clock, ClockError } from "./core/clock.js";
export type { ClockMode, FiredTimer, TimerRecord, WallTime } from "./core/clock.js";
export { parseGoDuration, formatGoDuration, DurationError } from "./core/durations.js";
export { formatInstant, parseInstant } from "./core/instant.js";
export type { StateSnapshot } from "./core/snapshot.js";
export { FixtureError, loadFixtureFile, validateFixture } from "./scenario-files/load.js";
export { shippedFixtureNames, shippedFixturePath } from "./scenario-files/shipped.js";
export type { Fixture } from "./scenario-files/schema.js";
export type { ServiceName } from "./http/service-names.js";
export { replayTape, formatReport, TapeError } from "./replay.js";
export type { ReplayReport, Divergence } from "./replay.js";
export type { Tape, TapeEntry } from "./control/tape.js";
export type { ActionOutcome, AwaitOutcome, TimelineStep } from "./control/scenario.js";
export { ActionError } from "./http/actions.js";
