/**
 * Named actions and conditions a service offers the control layer: the
 * vocabulary of fixture timelines (`{"at": "30s", "do": "node-down", "node":
 * "client-1"}`), of `POST /_standin/actions`, and of `POST /_standin/await`
 * (`{"until": {"deployment": {"job": "web", "status": "successful"}}}`).
 *
 * Actions run synchronously inside a store write, so a timeline step fired
 * by the clock lands at its instant, in order, and rolls back whole on error.
 * Conditions only read the state.
 */
import * as v from "valibot";
import { describeIssues } from "../core/validation.js";
import { HttpError } from "./errors.js";

/** A rejected action or condition: the control API's status and message. */
export class ActionError extends HttpError {
  constructor(
    override readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(status, message);
  }
}

type ArgsSchema = v.GenericSchema<unknown, Record<string, unknown>>;

export interface ActionSpec<Args extends Record<string, unknown> = Record<string, unknown>> {
  /** One line for the README and the OpenAPI document. */
  readonly summary: string;
  /** The action's arguments (the step's keys other than `at` and `do`). */
  readonly args: v.GenericSchema<unknown, Args>;
  /** Runs inside a store write; returns a JSON summary of what it did; throws ActionError. */
  run(args: Args): unknown;
}

export interface ConditionResult {
  readonly met: boolean;
  /** What the condition saw (reported when it is not met in time). */
  readonly observed: unknown;
}

export interface ConditionSpec<Args extends Record<string, unknown> = Record<string, unknown>> {
  readonly summary: string;
  readonly args: v.GenericSchema<unknown, Args>;
  check(args: Args): ConditionResult;
}

export type ActionTable = Readonly<Record<string, ActionSpec<never>>>;
export type ConditionTable = Readonly<Record<string, ConditionSpec<never>>>;

/** Typed helper so each spec's `run` sees its own argument type. */
export function action<S extends v.GenericSchema<unknown, Record<string, unknown>>>(spec: { summary: string; args: S; run(args: v.InferOutput<S>): unknown }): ActionSpec<never> {
  return spec as unknown as ActionSpec<never>;
}

export function condition<S extends v.GenericSchema<unknown, Record<string, unknown>>>(spec: {
  summary: string;
  args: S;
  check(args: v.InferOutput<S>): ConditionResult;
}): ConditionSpec<never> {
  return spec as unknown as ConditionSpec<never>;
}

/**
 * An action's arguments are bounded: they arrive in a control document of up
 * to 64 MiB, and a `job-register` of two million Meta keys or a 60 MB
 * `task-output` line held every port for seconds while it was checked,
 * admitted and put on the tape. At 10 000 values an action costs about what
 * `PUT /v1/jobs` of the same job does, a few tens of milliseconds. A larger
 * job goes through `PUT /v1/jobs` (25 000 values, core/json's MAX_BODY_VALUES).
 */
export const ACTION_ARGUMENT_VALUES = 10_000;
/** Characters of the arguments' strings, keys included: above the 1 MiB a `task-log` action appends, so that action's own limit is the one it meets. */
export const ACTION_ARGUMENT_CHARS = 2 * 1024 * 1024;

/**
 * Throws a 400 naming the limit when `args` hold more than
 * ACTION_ARGUMENT_VALUES values or ACTION_ARGUMENT_CHARS characters of
 * strings; `ignoredKey` (the body's `do`) is not counted. The walk stops as
 * soon as a limit is passed, so it costs at most the limit, whatever the size.
 */
export function checkArgumentSize(args: unknown, where: string, ignoredKey?: string): void {
  // Values are counted as they are found (a container's members before they are visited), so the walk never holds more than the limit.
  let values = 1;
  let chars = 0;
  const pending: unknown[] = [args];
  const found = (count: number) => {
    values += count;
    if (values > ACTION_ARGUMENT_VALUES) throw tooLarge(where, `more than ${ACTION_ARGUMENT_VALUES} JSON values`);
  };
  for (let value = pending.pop(); pending.length > 0 || value !== undefined; value = pending.pop()) {
    if (typeof value === "string") chars += value.length;
    else if (Array.isArray(value)) {
      found(value.length);
      for (const item of value) pending.push(item);
    } else if (typeof value === "object" && value !== null) {
      const keys = Object.keys(value);
      const skipped = value === args && ignoredKey !== undefined && Object.hasOwn(value, ignoredKey) ? ignoredKey : undefined;
      found(keys.length - (skipped === undefined ? 0 : 1));
      for (const key of keys) {
        if (key === skipped) continue;
        chars += key.length;
        pending.push((value as Record<string, unknown>)[key]);
      }
    }
    if (chars > ACTION_ARGUMENT_CHARS) throw tooLarge(where, `more than ${ACTION_ARGUMENT_CHARS} characters of strings`);
  }
}

/** A `POST /_standin/actions` body's bytes (a service request body's limit): any arguments within the limits above fit, written as JSON. */
export const ACTION_BODY_BYTES = 16 * 1024 * 1024;

function tooLarge(where: string, what: string): ActionError {
  return new ActionError(400, `${where}: arguments too large: ${what} (standin's limit for an action's arguments)`);
}

/** Validates arguments against a spec's schema (after bounding their size); the error names where they came from. */
export function parseArgs(schema: ArgsSchema, value: unknown, where: string): Record<string, unknown> {
  checkArgumentSize(value, where);
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw new ActionError(400, `${where}: ${describeIssues(result.issues).join("; ")}`);
}
