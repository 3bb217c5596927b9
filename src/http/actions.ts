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

/** Validates arguments against a spec's schema; the error names where they came from. */
export function parseArgs(schema: ArgsSchema, value: unknown, where: string): Record<string, unknown> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw new ActionError(400, `${where}: ${describeIssues(result.issues).join("; ")}`);
}
