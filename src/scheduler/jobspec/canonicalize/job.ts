/**
 * Steps 2 and 3 of admitting a job, the way a Nomad 1.9 server does them:
 * `api.Job.Canonicalize` fills client-side defaults and `ApiJobToStructJob`
 * converts to `structs.Job`, dropping what the server does not keep
 * (job-level update keeps only Stagger/MaxParallel; the tokens are blanked
 * as the register RPC does); then the admission mutators run
 * `structs.Job.Canonicalize` (priority 0 → 50, `Datacenters` `["*"]`, node
 * pool `default`, default identity, restart / reschedule / migrate defaults,
 * service and check names) and add the implied constraints (Vault, signals,
 * Nomad/Consul services). The Connect sidecar and expose-check mutators are
 * not emulated.
 */
import { decodeJob } from "../decode.js";
import { deepClone, isPlainObject, type Obj } from "../objects.js";
import { SERVER_FIELDS } from "../server-fields.js";
import { cloneStrings, getBool, getList, getNum, getObj, getObjList, getStr, has, nonEmptyMap } from "./accessors.js";
import { affinities, constraints, spreads } from "./blocks.js";
import type { JobContext } from "./context.js";
import { structsUpdate, UPDATE_DEFAULTS, withDefaults } from "./defaults.js";
import { buildGroup } from "./group.js";
import { addImpliedConstraints } from "./implied-constraints.js";

/**
 * Decodes and canonicalizes a job as a Nomad 1.9 server stores it (see the
 * module comment). `opts.region`/`opts.namespace` are the resolved values and
 * replace the job's own.
 */
export function canonicalizeJob(apiJob: unknown, opts: { region: string; namespace: string }): Record<string, unknown> {
  const api = decodeJob(apiJob);

  const id = getStr(api, "ID");
  const name = has(api, "Name") ? getStr(api, "Name") : id;
  const type = has(api, "Type") ? getStr(api, "Type") : "service";
  const apiPriority = has(api, "Priority") ? getNum(api, "Priority") : 50;
  const jobUpdate = has(api, "Update") ? withDefaults(getObj(api, "Update"), UPDATE_DEFAULTS) : type === "service" ? { ...UPDATE_DEFAULTS } : undefined;

  const ctx: JobContext = {
    type,
    id,
    name,
    namespace: opts.namespace,
    consulNamespace: getStr(api, "ConsulNamespace"),
    vaultNamespace: getStr(api, "VaultNamespace"),
    update: jobUpdate,
    reschedule: getObj(api, "Reschedule"),
    migrate: getObj(api, "Migrate"),
  };

  // ApiJobToStructJob keeps only Stagger and MaxParallel of the job's update.
  const jobLevelUpdate = structsUpdate({});
  if (jobUpdate && getNum(jobUpdate, "MaxParallel") > 0) {
    jobLevelUpdate["Stagger"] = getNum(jobUpdate, "Stagger");
    jobLevelUpdate["MaxParallel"] = getNum(jobUpdate, "MaxParallel");
  }

  const datacenters = getList(api, "Datacenters");
  const groups = getObjList(api, "TaskGroups");

  const multiregion = getObj(api, "Multiregion");
  let multiregionOut: Obj | null = null;
  if (multiregion) {
    const strategy = getObj(multiregion, "Strategy");
    multiregionOut = {
      Strategy: { MaxParallel: getNum(strategy, "MaxParallel"), OnFailure: getStr(strategy, "OnFailure") },
      Regions: getObjList(multiregion, "Regions").map((r) => ({
        Name: getStr(r, "Name"),
        Count: getNum(r, "Count", 1),
        Datacenters: cloneStrings(r["Datacenters"]) ?? [],
        NodePool: getStr(r, "NodePool"),
        Meta: isPlainObject(r["Meta"]) ? deepClone(r["Meta"]) : {},
      })),
    };
  }

  const periodic = getObj(api, "Periodic");
  const parameterized = getObj(api, "ParameterizedJob");
  const ui = getObj(api, "UI");
  const versionTag = getObj(api, "VersionTag");

  const job: Obj = {
    Stop: getBool(api, "Stop"),
    Region: opts.region,
    Namespace: opts.namespace,
    ID: id,
    ParentID: "",
    Name: name,
    Type: type,
    Priority: apiPriority === 0 ? 50 : apiPriority, // jobCanonicalizer: 0 → the server's default
    AllAtOnce: getBool(api, "AllAtOnce"),
    Datacenters: datacenters && datacenters.length > 0 ? datacenters.slice() : ["*"],
    NodePool: getStr(api, "NodePool") || "default",
    Constraints: constraints(getList(api, "Constraints")),
    Affinities: affinities(getList(api, "Affinities")),
    Spreads: spreads(getList(api, "Spreads")),
    TaskGroups: groups.length > 0 ? groups.map((tg) => buildGroup(tg, ctx)) : null,
    Update: jobLevelUpdate,
    Multiregion: multiregionOut,
    Periodic: periodic
      ? {
          Enabled: getBool(periodic, "Enabled", true),
          Spec: getStr(periodic, "Spec"),
          Specs: cloneStrings(periodic["Specs"]),
          SpecType: getStr(periodic, "SpecType", "cron"),
          ProhibitOverlap: getBool(periodic, "ProhibitOverlap"),
          TimeZone: getStr(periodic, "TimeZone") || "UTC",
        }
      : null,
    ParameterizedJob: parameterized
      ? {
          Payload: getStr(parameterized, "Payload") || "optional",
          MetaRequired: cloneStrings(parameterized["MetaRequired"]),
          MetaOptional: cloneStrings(parameterized["MetaOptional"]),
        }
      : null,
    Dispatched: false,
    DispatchIdempotencyToken: "",
    Payload: has(api, "Payload") ? getStr(api, "Payload") : null,
    Meta: nonEmptyMap(api["Meta"]),
    ConsulToken: "", // never stored (Job.Register clears it)
    ConsulNamespace: "", // not copied by ApiJobToStructJob; merged into the groups' Consul blocks
    VaultToken: "", // never stored
    VaultNamespace: getStr(api, "VaultNamespace"),
    NomadTokenID: "",
    ...SERVER_FIELDS,
    UI: ui
      ? {
          Description: getStr(ui, "Description"),
          Links: getList(ui, "Links") ? getObjList(ui, "Links").map((l) => ({ Label: getStr(l, "Label"), Url: getStr(l, "Url") })) : null,
        }
      : null,
    VersionTag: versionTag ? { Name: getStr(versionTag, "Name"), Description: getStr(versionTag, "Description"), TaggedTime: getNum(versionTag, "TaggedTime") } : null,
  };
  for (const tg of (job["TaskGroups"] as Obj[] | null) ?? []) addImpliedConstraints(tg);
  return job;
}
