/**
 * The interface each service exports to the emulator (and through it to the
 * control API): its routes, its control routes, and how it builds its part
 * of the state from fixtures.
 */
import type { Context, Hono } from "hono";
import type { ServiceContext } from "../core/context.js";
import type { Row, Table } from "../core/store.js";
import type { ActionTable, ConditionTable } from "./actions.js";
import type { DocumentedRoutes } from "./documented-routes.js";
import type { Credentials } from "./redact.js";
import type { RouteCatalog } from "./coverage.js";
import type { ServiceName } from "./service-names.js";

export interface ServiceInstance<Section> {
  readonly name: ServiceName;
  /** The service's own routes. */
  readonly app: Hono;
  /** The real product's answer to a path no route matched. */
  notFound(c: Context): Response | Promise<Response>;
  /**
   * Set when one function answers every request (its `app` is that function
   * on every path): the port then runs it as its only handler, after the
   * service-request work, so each request takes Hono's single-handler path
   * instead of composing a middleware chain.
   */
  readonly handler?: (c: Context) => Response | Promise<Response>;
  /** Extra control routes, mounted at `/_standin/<name>`: declared with their documentation (tag: the service's name) for the OpenAPI document. */
  readonly control?: DocumentedRoutes;
  /**
   * The key of a GET read whose answer depends on nothing else of the request
   * (see the routers' `readKey`); lets the port replay remembered answers
   * (http/answer-replay). Absent: nothing is replayed.
   */
  readKey?(request: Request): string | undefined;
  /** The product's routes, emulated or not (GET /_standin/coverage counts requests against them). */
  readonly routeCatalog: RouteCatalog;
  /** Responses compress with gzip above this many bytes (the products differ). */
  readonly compressThreshold: number;
  /** Builds this service's part of a new state: defaults, then each start fixture's section in order. Runs inside a store write. */
  initialize(sections: readonly Section[]): void;
  /**
   * initialize as steps, in the same order (the same IDs, rows and indexes): yields after each
   * entity, so a large start fixture can be built a slice at a time (a reset with a fixture).
   */
  initializeSteps(sections: readonly Section[]): Generator<void, void, undefined>;
  /** Adds a fixture section to the current state. Runs inside a store write. */
  applyFixture(section: Section): void;
  /**
   * applyFixture as steps, in the same order (the same IDs, rows and indexes): yields after each
   * entity, so a large fixture can be applied a slice at a time (Store.writeStaged).
   */
  fixtureSteps(section: Section): Generator<void, void, undefined>;
  /** Named actions for timelines and `POST /_standin/actions` (names unique across services). */
  readonly actions?: ActionTable;
  /** Named conditions for `POST /_standin/await`. */
  readonly conditions?: ConditionTable;
  /** The credentials its state knows, by references safe to write in the tape and the journal (http/redact). */
  readonly credentials?: Credentials;
}

/** Runs every step of a fixture's steps at once: applyFixture from fixtureSteps. */
export function drain(steps: Iterator<unknown>): void {
  while (!steps.next().done);
}

export type ServiceFactory<Section> = (ctx: ServiceContext) => ServiceInstance<Section>;

/**
 * A service's settings kept as one row of its config table: the defaults on a
 * new state, then each fixture section merged over the current value. Kept
 * in the store so snapshot, restore, reset and the hash cover them.
 */
export function settingsRow<Settings extends Row, Section>(table: Table<Settings>, id: string, defaults: Settings, merge: (current: Settings, section: Section) => Settings) {
  const current = () => table.get(id) ?? defaults;
  return {
    current,
    initialize(sections: readonly Section[]): void {
      table.put(id, defaults);
      for (const section of sections) table.put(id, merge(current(), section));
    },
    apply(section: Section): void {
      table.put(id, merge(current(), section));
    },
  };
}
