/**
 * Test-runner integration shared by `standin/vitest` and `standin/node-test`:
 * one emulator per worker on free ports, environment variables for the real
 * clients, a reset before every test, and a handle for the tests.
 *
 * The runners differ only in which hook functions they register; everything
 * else lives here. Running emulators are kept on `globalThis` under a
 * registered symbol, so every copy of this module in one worker (test files
 * that share a worker when isolation is off, a setup file plus a test file)
 * finds and shares the same instance.
 */
import type { FiredTimer } from "../core/clock.js";
import type { Standin } from "../emulator.js";
import type { FixtureSource } from "../emulator.js";
import type { ServiceName } from "../http/service-names.js";
import { fixtureReference } from "../scenario-files/shipped.js";
import { PortInUseError, startStandin, type RunningStandin, type StartStandinOptions } from "../server.js";

export interface UseStandinOptions {
  /**
   * Start fixture(s): a document, a file path, or an array of them (as `createStandin` takes).
   * Default: the file or shipped fixture named by `STANDIN_FIXTURE` when it is set, else the default world.
   */
  fixture?: FixtureSource | readonly FixtureSource[];
  /** Overrides the fixtures' seed. */
  seed?: number;
  /** Overrides the fixtures' clock settings (as `createStandin` takes them). */
  clock?: StartStandinOptions["clock"];
  /** Send and accept the real products' header names too (default true). */
  compatHeaders?: boolean;
  /** Require `Authorization: Bearer <token>` on the control API. */
  controlToken?: string;
  /** Set `NOMAD_ADDR`, `CONSUL_HTTP_ADDR`, `STANDIN_*_URL` (default true); `false` leaves `process.env` alone. */
  env?: boolean;
  /** Reset the emulator to its start state before every test (default true). */
  reset?: boolean;
  /**
   * Fixed ports for some or all services, e.g. `{ scheduler: 4646, registry: 8500, echo: 8080 }`
   * (as `startStandin` takes them); the others (default: all) get any free port. A fixed port
   * holds one emulator at a time: test files running in parallel cannot each start their own.
   */
  ports?: Partial<Record<ServiceName, number>>;
}

/** What `useStandin()` returns: usable inside tests and hooks, once the emulator has started. */
export interface StandinHandle {
  /** Base URLs of the three services, and the control API's (`<scheduler>/_standin`). */
  readonly urls: Readonly<Record<ServiceName, string> & { control: string }>;
  /** The ports the services listen on (127.0.0.1). */
  readonly ports: Readonly<Record<ServiceName, number>>;
  /** The emulator itself: `emulator.clock`, `emulator.applyFixture()`, `emulator.events`, … */
  readonly emulator: Standin;
  /** The running servers (`urls`, `ports`, `emulator`, `close`). */
  readonly server: RunningStandin;
  /** The environment variables useStandin sets (whether or not `env: false` kept them out of `process.env`). */
  readonly env: Readonly<Record<string, string>>;
  /** Moves the virtual clock forward (Go duration or ms), firing every due timer; returns what fired. */
  advance(by: string | number): FiredTimer[];
  /** Back to the start state (what the per-test reset does). */
  reset(): Promise<void>;
  /**
   * Starts the emulator now rather than in the before-all hook (which then finds it
   * running), e.g. with top-level `await` in a setup file, so the environment variables
   * are already set while test files are imported. The after-all hook still closes it.
   */
  start(): Promise<StandinHandle>;
}

/** The hook registrars of one test runner. */
export interface RunnerHooks {
  name: string;
  beforeAll(fn: () => Promise<void>): void;
  beforeEach(fn: () => Promise<void>): void;
  afterAll(fn: () => Promise<void>): void;
}

interface SharedEntry {
  key: string;
  starting: Promise<RunningStandin>;
  users: number;
}

const REGISTRY = Symbol.for("standin.testing.instances");

function instances(): Map<string, SharedEntry> {
  const holder = globalThis as { [REGISTRY]?: Map<string, SharedEntry> };
  return (holder[REGISTRY] ??= new Map());
}

/** The emulator options that make an instance; users asking for the same ones share it. */
function emulatorOptions(options: UseStandinOptions): StartStandinOptions {
  const result: StartStandinOptions = {
    host: "127.0.0.1",
    ports: { scheduler: 0, registry: 0, echo: 0, ...options.ports },
  };
  const fromEnv = process.env.STANDIN_FIXTURE;
  if (options.fixture !== undefined) result.fixture = options.fixture;
  // A shipped name as the CLI's --fixture takes it; a path fixed now, as the instance key must not depend on a later chdir.
  else if (fromEnv) result.fixture = fixtureReference(fromEnv);
  if (options.seed !== undefined) result.seed = options.seed;
  if (options.clock !== undefined) result.clock = options.clock;
  if (options.compatHeaders !== undefined) result.compatHeaders = options.compatHeaders;
  if (options.controlToken !== undefined) result.controlToken = options.controlToken;
  return result;
}

function instanceKey(options: StartStandinOptions): string {
  return JSON.stringify(options, (_key, value: unknown) => {
    // Sorted keys: the same options in another order are the same instance.
    if (value && typeof value === "object" && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return value;
  });
}

/** The variables the real clients (and standin's CLI) read, for a running instance. */
export function environmentFor(server: RunningStandin): Record<string, string> {
  return {
    NOMAD_ADDR: server.urls.scheduler,
    CONSUL_HTTP_ADDR: `127.0.0.1:${server.ports.registry}`,
    STANDIN_ECHO_URL: server.urls.echo,
    STANDIN_SCHEDULER_URL: server.urls.scheduler,
    STANDIN_REGISTRY_URL: server.urls.registry,
    STANDIN_CONTROL_URL: server.urls.control,
    STANDIN_URL: server.urls.scheduler,
  };
}

async function acquire(options: StartStandinOptions): Promise<{ entry: SharedEntry; server: RunningStandin }> {
  const map = instances();
  const key = instanceKey(options);
  let entry = map.get(key);
  if (!entry) {
    const starting = startStandin(options);
    entry = { key, starting, users: 0 };
    map.set(key, entry);
    // A failed start must not stay registered for the next user.
    starting.catch(() => {
      if (map.get(key) === entry) map.delete(key);
    });
  }
  entry.users += 1;
  try {
    return { entry, server: await entry.starting };
  } catch (error) {
    entry.users -= 1;
    if (error instanceof PortInUseError) throw fixedPortTaken(error);
    throw error;
  }
}

/** A fixed port in use is most often another test file's emulator: say how to run them one at a time. */
function fixedPortTaken(error: PortInUseError): Error {
  return new Error(
    `standin: ${error.message}; with fixed ports only one emulator can run at a time ` +
      "(another test file's, or a standin left running): run the test files one at a time " +
      "(vitest: fileParallelism: false; node --test: --test-concurrency=1), or leave the ports to the OS",
    { cause: error },
  );
}

async function release(entry: SharedEntry): Promise<void> {
  entry.users -= 1;
  if (entry.users > 0) return;
  const map = instances();
  if (map.get(entry.key) === entry) map.delete(entry.key);
  const server = await entry.starting;
  await server.close();
}

/**
 * Registers the hooks on `hooks` and returns the handle. Call it at the top
 * level of a setup file or a test file (or inside a describe block, to scope it).
 */
export function useStandinWith(hooks: RunnerHooks, options: UseStandinOptions = {}): StandinHandle {
  const startOptions = emulatorOptions(options);
  const setEnv = options.env !== false;
  const resetEachTest = options.reset !== false;

  let entry: SharedEntry | undefined;
  let server: RunningStandin | undefined;
  let env: Record<string, string> | undefined;
  let previousEnv: Record<string, string | undefined> | undefined;
  let closed = false;

  const started = (what: string): RunningStandin => {
    if (server) return server;
    if (closed) throw new Error(`standin: ${what} is not available any more: the emulator was closed in an after-all hook`);
    throw new Error(
      `standin: ${what} is not available yet: useStandin() starts the emulator in a ${hooks.name} before-all hook, ` +
        `so use the handle inside tests or hooks (or \`await handle.start()\` first to start it earlier)`,
    );
  };

  let starting: Promise<void> | undefined;
  const start = (): Promise<void> =>
    (starting ??= (async () => {
      closed = false;
      const acquired = await acquire(startOptions);
      entry = acquired.entry;
      server = acquired.server;
      env = environmentFor(server);
      if (setEnv) {
        previousEnv = {};
        for (const [name, value] of Object.entries(env)) {
          previousEnv[name] = process.env[name];
          process.env[name] = value;
        }
      }
    })());

  hooks.beforeAll(start);

  hooks.beforeEach(async () => {
    if (resetEachTest && server) await server.emulator.reset();
  });

  hooks.afterAll(async () => {
    const pending = starting;
    starting = undefined;
    if (!pending) return;
    await pending.catch(() => undefined);
    if (!entry) return;
    if (previousEnv && env) {
      for (const [name, value] of Object.entries(previousEnv)) {
        // Leave a variable alone that someone else has changed since.
        if (process.env[name] !== env[name]) continue;
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const done = entry;
    closed = true;
    entry = undefined;
    server = undefined;
    previousEnv = undefined;
    await release(done);
  });

  const handle: StandinHandle = {
    get urls() {
      return started("urls").urls;
    },
    get ports() {
      return started("ports").ports;
    },
    get emulator() {
      return started("emulator").emulator;
    },
    get server() {
      return started("server");
    },
    get env() {
      started("env");
      return env!;
    },
    advance(by: string | number): FiredTimer[] {
      const emulator = started("advance()").emulator;
      const fired = emulator.clock.advance(by);
      emulator.noteClockOperation("advance", { by: typeof by === "number" ? `${by}ms` : by });
      return fired;
    },
    async reset(): Promise<void> {
      await started("reset()").emulator.reset();
    },
    async start(): Promise<StandinHandle> {
      await start();
      return handle;
    },
  };
  return handle;
}
