/**
 * The variables' control action and condition (for fixture timelines,
 * `POST /_standin/actions` and `POST /_standin/await`): a lock lost at once,
 * and a variable that exists, is gone, or is (un)locked.
 */
import * as v from "valibot";
import type { ServiceContext } from "../../core/context.js";
import { ActionError, action, condition, type ActionTable, type ConditionTable } from "../../http/actions.js";
import type { SchedulerState } from "../state/model.js";
import { metadataView, variablesOf } from "./variables.js";

const variableArgs = { path: v.pipe(v.string(), v.nonEmpty()), namespace: v.optional(v.string()) };

export function variableActions(state: SchedulerState, ctx: ServiceContext): ActionTable {
  return {
    "variable-lock-release": action({
      summary: "a variable's lock is released now, as the server does when a lapsed lock's delay ends (Items kept; the holder's renewals then fail)",
      args: v.strictObject(variableArgs),
      run: (a) => {
        const variables = variablesOf(state);
        const namespace = a.namespace ?? "default";
        const row = variables.get(namespace, a.path);
        if (!row) throw new ActionError(404, `no variable "${a.path}" in namespace "${namespace}"`);
        if (!row.Lock) throw new ActionError(409, `variable "${a.path}" holds no lock`);
        const released = ctx.store.write(() => variables.release(namespace, a.path, undefined));
        return { ...metadataView(released, false), ReleasedLockID: row.Lock.ID };
      },
    }),
  };
}

export function variableConditions(state: SchedulerState): ConditionTable {
  return {
    variable: condition({
      summary: "a variable exists, is gone, is locked or is unlocked",
      args: v.strictObject({ ...variableArgs, state: v.picklist(["exists", "gone", "locked", "unlocked"]) }),
      check: (a) => {
        const row = variablesOf(state).get(a.namespace ?? "default", a.path);
        const observed = row ? { ModifyIndex: row.ModifyIndex, Locked: row.Lock !== null, LockID: row.Lock?.ID ?? null } : null;
        const met = { exists: row !== undefined, gone: row === undefined, locked: row?.Lock != null, unlocked: row !== undefined && row.Lock === null }[a.state];
        return { met, observed };
      },
    }),
  };
}
