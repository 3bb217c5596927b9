/**
 * `/v1/operator/scheduler/configuration` (command/agent/operator_endpoint.go
 * OperatorSchedulerConfiguration; nomad/operator_endpoint.go
 * SchedulerGetConfiguration, SchedulerSetConfiguration): the cluster's
 * scheduler configuration (scheduler-config.ts), read with `operator:read`
 * and written with `operator:write`, optionally check-and-set (`?cas=`).
 *
 * The GET is not a blocking query in Nomad (`?index=` answers at once) and
 * answers the whole SchedulerConfigurationResponse, its QueryMeta included.
 */
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { goQuote } from "../../core/go/strconv.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, field, invalidMethod, jsonBody, NomadError, Read, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { schedulerConfig, validateSchedulerConfig, type SchedulerConfigInput } from "../state/scheduler-config.js";
import { rpc } from "./helpers.js";
import type { RouteKit } from "./kit.js";

/** structs.ErrJobRegistrationDisabled (403 by its suffix in Nomad's HTTP layer). */
export const JOB_REGISTRATION_DISABLED = "Job registration, dispatch, and scale are disabled by the scheduler configuration";

/** registrationsAreAllowed: a configuration rejecting job registrations refuses every token but a management one. */
export function assertRegistrationsAllowed(kit: RouteKit, rc: RequestContext): void {
  if (schedulerConfig(kit.ctx.store).RejectJobRegistration && !rc.acl.management) throw new NomadError(403, JOB_REGISTRATION_DISABLED);
}

export function registerOperatorRoutes(router: NomadRouter, kit: RouteKit): void {
  const { ctx, engine } = kit;
  router.exact("/v1/operator/scheduler/configuration", async (rc) => {
    if (rc.method === "GET") {
      if (!rc.acl.allow("operator", "read")) throw permissionDenied();
      const config = schedulerConfig(ctx.store);
      return new Read(
        { SchedulerConfig: config, Index: config.ModifyIndex, KnownLeader: rc.leader.known, LastContact: rc.leader.lastContactMs, NextToken: "" },
        config.ModifyIndex,
      );
    }
    if (rc.method !== "PUT" && rc.method !== "POST") throw invalidMethod();
    const config = await decodeConfig(rc);
    const invalid = validateSchedulerConfig(config);
    if (invalid !== undefined) throw badRequest(invalid);
    const cas = parseCas(rc);
    if (!rc.acl.allow("operator", "write")) throw permissionDenied();
    const { updated, index } = rpc(() => engine.setSchedulerConfig(config, cas));
    return new Write({ Index: index, Updated: updated }, index);
  });
}

/** The body as the handler decodes it into api.SchedulerConfiguration; a decode error is a 400 with Go's words after the handler's. */
async function decodeConfig(rc: RequestContext): Promise<SchedulerConfigInput> {
  try {
    const body = await jsonBody(rc);
    if (body !== null && (typeof body !== "object" || Array.isArray(body))) throw badRequest(unmarshalTypeError(jsonKind(body), "api.SchedulerConfiguration"));
    const preemption = field(body, "PreemptionConfig");
    if (preemption !== undefined && preemption !== null && (typeof preemption !== "object" || Array.isArray(preemption)))
      throw badRequest(unmarshalTypeError(jsonKind(preemption), "api.PreemptionConfig", "SchedulerConfiguration.PreemptionConfig"));
    const flag = (struct: string, source: unknown, name: string) => typedField(source, struct, name, "bool") ?? false;
    const inner = "SchedulerConfiguration.PreemptionConfig";
    const config: SchedulerConfigInput = {
      SchedulerAlgorithm: typedField(body, "SchedulerConfiguration", "SchedulerAlgorithm", "string") ?? "",
      PreemptionConfig: {
        SystemSchedulerEnabled: flag(inner, preemption, "SystemSchedulerEnabled"),
        SysBatchSchedulerEnabled: flag(inner, preemption, "SysBatchSchedulerEnabled"),
        BatchSchedulerEnabled: flag(inner, preemption, "BatchSchedulerEnabled"),
        ServiceSchedulerEnabled: flag(inner, preemption, "ServiceSchedulerEnabled"),
      },
      MemoryOversubscriptionEnabled: flag("SchedulerConfiguration", body, "MemoryOversubscriptionEnabled"),
      RejectJobRegistration: flag("SchedulerConfiguration", body, "RejectJobRegistration"),
      PauseEvalBroker: flag("SchedulerConfiguration", body, "PauseEvalBroker"),
    };
    // Decoded (so a mistyped one is refused) but not used: the handler copies neither, the query's `cas` is the CAS index.
    typedField(body, "SchedulerConfiguration", "CreateIndex", "uint64");
    typedField(body, "SchedulerConfiguration", "ModifyIndex", "uint64");
    return config;
  } catch (error) {
    if (error instanceof NomadError && error.status === 400) throw badRequest(`Error parsing scheduler config: ${error.message}`);
    throw error;
  }
}

/** `?cas=`: strconv.ParseUint's words when it is not a uint64. */
function parseCas(rc: RequestContext): number | undefined {
  if (!rc.query.has("cas")) return undefined;
  const raw = rc.query.get("cas") ?? "";
  const reason = !/^\d+$/.test(raw) ? "invalid syntax" : BigInt(raw) > 2n ** 64n - 1n ? "value out of range" : undefined;
  if (reason !== undefined) throw badRequest(`Error parsing cas value: strconv.ParseUint: parsing ${goQuote(raw)}: ${reason}`);
  return Number(raw);
}
