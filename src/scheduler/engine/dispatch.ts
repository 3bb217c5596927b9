/**
 * Job.Dispatch: a child job derived from a parameterized parent, with the
 * request's payload and meta, checked against the parent's parameters.
 */
import type { EngineCore } from "./core.js";
import { CodedError } from "./errors.js";
import { isParameterized } from "./job-kinds.js";
import { register } from "./register.js";

/** Job.Dispatch: derives a child job from a parameterized one and registers it with an eval. */
export function dispatch(
  core: EngineCore,
  namespace: string,
  id: string,
  request: { payload: string; meta: Record<string, string>; idempotencyToken: string; idPrefixTemplate?: string },
) {
  const { state, ctx } = core;
  if (id === "") throw new CodedError(500, "missing parameterized job ID");
  const parent = state.job(namespace, id);
  if (!parent) throw new CodedError(500, "parameterized job not found");
  if (!isParameterized(parent)) throw new CodedError(500, `Specified job "${id}" is not a parameterized job`);
  if (parent.Stop) throw new CodedError(500, `Specified job "${id}" is stopped`);
  const config = parent.ParameterizedJob as { Payload?: string; MetaRequired?: string[] | null; MetaOptional?: string[] | null };
  const hasPayload = request.payload !== "";
  if (config.Payload === "required" && !hasPayload) throw new CodedError(500, "Payload is not provided but required by parameterized job");
  if (config.Payload === "forbidden" && hasPayload) throw new CodedError(500, "Payload provided but forbidden by parameterized job");
  const allowed = new Set([...(config.MetaRequired ?? []), ...(config.MetaOptional ?? [])]);
  const unpermitted = Object.keys(request.meta)
    .filter((k) => !allowed.has(k))
    .sort();
  if (unpermitted.length) throw new CodedError(500, `Dispatch request included unpermitted metadata keys: [${unpermitted.join(" ")}]`);
  const missing = (config.MetaRequired ?? []).filter((k) => !(k in request.meta)).sort();
  if (missing.length) throw new CodedError(500, `Dispatch did not provide required meta keys: [${missing.join(" ")}]`);
  if (request.idempotencyToken) {
    const earlier = state.childrenOf(namespace, id).find((j) => j.DispatchIdempotencyToken === request.idempotencyToken);
    if (earlier) return { DispatchedJobID: earlier.ID, EvalID: "", EvalCreateIndex: 0, JobCreateIndex: earlier.CreateIndex, Index: earlier.ModifyIndex };
  }
  const childId = dispatchedId(id, request.idPrefixTemplate ?? "", Math.floor(ctx.clock.now() / 1000), ctx.ids.uuid().slice(0, 8));
  const child = {
    ...parent,
    ID: childId,
    Name: childId,
    ParentID: id,
    Dispatched: true,
    DispatchIdempotencyToken: request.idempotencyToken,
    Meta: Object.keys(request.meta).length ? { ...((parent.Meta as Record<string, string> | null) ?? {}), ...request.meta } : parent.Meta,
    Payload: hasPayload ? request.payload : null,
  };
  const result = register(core, child, { alwaysNewVersion: true });
  const created = state.job(namespace, childId)!;
  return { DispatchedJobID: childId, EvalID: result.EvalID, EvalCreateIndex: result.EvalCreateIndex, JobCreateIndex: created.CreateIndex, Index: result.Index };
}

/**
 * structs.DispatchedID: `<parent>/dispatch-[<template>-]<unix seconds>-<8 hex>`. Nomad takes the
 * request's IdPrefixTemplate as it is (no length or character check: the child is committed
 * without the job validation a registration gets), so standin does too.
 */
export function dispatchedId(parentId: string, idPrefixTemplate: string, unixSeconds: number, suffix: string): string {
  return idPrefixTemplate !== "" ? `${parentId}/dispatch-${idPrefixTemplate}-${unixSeconds}-${suffix}` : `${parentId}/dispatch-${unixSeconds}-${suffix}`;
}
