/**
 * Checking start fixtures the way `standin start` uses them: the files are
 * loaded and their start state is built in a throw-away emulator (no ports),
 * so every check `start` makes (schema, timeline actions and durations, the
 * services' own checks of jobs, sessions and KV entries) is made here too, by
 * the same code. A failure names the file it is due to, for `start` and
 * `fixtures check` alike.
 */
import { FixtureError, loadFixtureFile } from "../scenario-files/load.js";
import type { CreateStandinOptions } from "./standin.js";
import { createStandinWithControl } from "./with-control.js";

/** What shapes a start state besides the fixtures (`start --seed`, `--clock`, `--start-time`). */
export type StartStateOptions = Pick<CreateStandinOptions, "seed" | "clock">;

/**
 * Checks `files` as start fixtures applied together, in order (`start
 * --fixture a --fixture b`). Every file is read and validated first (each bad
 * one reported); then the start state is built. Resolves with the problems,
 * one FixtureError per bad file (none: the files start).
 */
export async function checkStartFixtures(files: readonly string[], options: StartStateOptions = {}): Promise<FixtureError[]> {
  const unreadable: FixtureError[] = [];
  for (const file of files) {
    try {
      await loadFixtureFile(file);
    } catch (error) {
      if (!(error instanceof FixtureError)) throw error;
      unreadable.push(error);
    }
  }
  if (unreadable.length > 0) return unreadable;
  try {
    await withFixtureBlame(files, options, async () => (await createStandinWithControl({ ...options, fixture: files })).close());
    return [];
  } catch (error) {
    if (error instanceof FixtureError) return [error];
    throw error;
  }
}

/**
 * Runs `start` (a real start, or a throw-away build) of the fixture `files`;
 * when it fails because of a fixture, the failure becomes a FixtureError
 * naming that file. Any other failure (a port in use, a bad state file) is
 * passed on as it is.
 */
export async function withFixtureBlame<T>(files: readonly string[], options: StartStateOptions, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    throw await blame(files, options, error);
  }
}

/**
 * Which file a failed start is due to. Reading and validating a file names it
 * already; a failure while the state is built (the services see every file's
 * sections together) is found again by building the first file alone, then
 * the first two, and so on: the first of these builds that fails the same way
 * ends with the file to blame. A later file can satisfy an earlier one (a KV
 * entry naming a session a later file lists, an edition a later file sets), so
 * a prefix failing some other way is passed over.
 */
async function blame(files: readonly string[], options: StartStateOptions, error: unknown): Promise<unknown> {
  if (error instanceof FixtureError && files.includes(error.source)) return error;
  if (!(error instanceof Error) || files.length === 0) return error;
  const wanted = problemsOf(error);
  for (let count = 1; count <= files.length; count++) {
    try {
      (await createStandinWithControl({ ...options, fixture: files.slice(0, count) })).close();
    } catch (prefixError) {
      const problems = problemsOf(prefixError);
      if (sameProblems(problems, wanted)) return new FixtureError(files[count - 1]!, problems);
    }
  }
  // Not a fixture's doing (every build succeeds): the caller's own error.
  return error;
}

/**
 * A build failure's problems, as paths inside the fixture: the emulator names
 * a timeline's steps after its place in the list (`fixture.timeline[0]`,
 * `fixture[1].timeline[0]`), which the file name replaces.
 */
function problemsOf(error: unknown): string[] {
  const problems = error instanceof FixtureError ? error.problems : [(error as Error)?.message ?? String(error)];
  return problems.map((p) => p.replace(/^fixture(\[\d+\])?\./, ""));
}

function sameProblems(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i]);
}
