/**
 * The interface each service exports to the emulator (and through it to the
 * control API): its routes, its control routes, and how it builds its part
 * of the state from fixtures.
 */
import type { Context, Hono } from "hono";
import type { ServiceContext } from "../core/context.js";

export type ServiceName = "scheduler" | "registry" | "echo";

export const SERVICE_NAMES: readonly ServiceName[] = ["scheduler", "registry", "echo"];

export const DEFAULT_PORTS: Record<ServiceName, number> = { scheduler: 4646, registry: 8500, echo: 8080 };

export interface ServiceInstance<Section> {
  readonly name: ServiceName;
  /** The service's own routes. */
  readonly app: Hono;
  /** The real product's answer to a path no route matched. */
  notFound(c: Context): Response | Promise<Response>;
  /** Extra control routes, mounted at `/_standin/<name>`. */
  readonly control?: Hono;
  /** Responses compress with gzip above this many bytes (the products differ). */
  readonly compressThreshold: number;
  /** Builds this service's part of a new state: defaults, then each start fixture's section in order. Runs inside a store write. */
  initialize(sections: readonly Section[]): void;
  /** Adds a fixture section to the current state. Runs inside a store write. */
  applyFixture(section: Section): void;
}

export type ServiceFactory<Section> = (ctx: ServiceContext) => ServiceInstance<Section>;
