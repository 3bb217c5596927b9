/**
 * The emulator as callers get it (`createStandin`: the package's API, the
 * server, the tests): one emulator (standin/standin.ts) with the control
 * API under `/_standin` (standin/with-control.ts) and, unless `ui: false`,
 * the dashboard mounted among the control routes. The floor where the three
 * meet: the emulator does not import the control API, nor the control API
 * the dashboard.
 */
import type { CreateStandinOptions, Standin } from "./standin/standin.js";
import { createStandinWithControl } from "./standin/with-control.js";
import { Dashboard } from "./ui/dashboard.js";
import { dashboardRoutes } from "./ui/routes.js";

export {
  type CreateStandinOptions,
  DEFAULT_JOURNAL_BYTES,
  DEFAULT_JOURNAL_ENTRIES,
  DEFAULT_SEED,
  DEFAULT_START,
  type FixtureSource,
  type RecordingSettings,
  type RecordingStatus,
  resolveFixtures,
  Standin,
} from "./standin/standin.js";

/** Creates an emulator in process (no sockets). */
export async function createStandin(options: CreateStandinOptions = {}): Promise<Standin> {
  return createStandinWithControl(options, options.ui === false ? undefined : (standin) => dashboardRoutes(new Dashboard(standin)));
}
