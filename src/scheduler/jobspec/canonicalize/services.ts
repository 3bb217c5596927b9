/**
 * Services and their checks, group- or task-level: ApiServicesToStructs with
 * the api and structs Service.Canonicalize (default and interpolated names,
 * provider, namespace, on_update, check restart merging, check names).
 * A service's `Connect` block is kept as the client sent it (the Connect
 * sidecar mutator is not emulated).
 */
import { SECOND } from "../go.js";
import { goQuote } from "../../../core/go/strconv.js";
import { deepClone, isPlainObject, setOwn, type Obj } from "../objects.js";
import { getBool, getList, getNum, getObj, getObjList, getStr, has, nonEmptyMap, nonEmptyStrings } from "./accessors.js";
import { workloadIdentity } from "./blocks.js";
import type { JobContext } from "./context.js";

/** args.ReplaceEnv: `${KEY}` is replaced for the given keys only. */
function replaceEnv(text: string, vars: Readonly<Record<string, string>>): string {
  return text.replace(/\$\{([^}]*)\}/g, (whole, key: string) => (Object.hasOwn(vars, key) ? (vars[key] ?? "") : whole));
}

function positiveOrOne(weight: number): number {
  return weight <= 0 ? 1 : weight;
}

/** ApiServicesToStructs + api Service.Canonicalize + structs Service.Canonicalize. */
export function services(list: unknown[] | undefined, ctx: JobContext, groupName: string, taskName: string | null): Obj[] | null {
  if (!list || list.length === 0) return null;
  const taskOrGroup = taskName ?? "group";
  return list.map((entry) => {
    const svc = isPlainObject(entry) ? entry : {};
    let name = getStr(svc, "Name");
    if (name === "") name = taskName !== null ? `${ctx.name}-${groupName}-${taskName}` : `${ctx.name}-${groupName}`;
    name = replaceEnv(name, {
      JOB: ctx.name,
      TASKGROUP: groupName,
      TASK: taskOrGroup,
      BASE: `${ctx.name}-${groupName}-${taskOrGroup}`,
    });
    const onUpdate = getStr(svc, "OnUpdate") || "require_healthy";
    const provider = getStr(svc, "Provider") || "consul";
    const serviceTask = getStr(svc, "TaskName") || (taskName ?? "");
    const serviceRestart = getObj(svc, "CheckRestart");
    const checks = getObjList(svc, "Checks").map((check) => {
      // api CheckRestart.Merge + Canonicalize (grace defaults to 1s)
      const own = getObj(check, "CheckRestart");
      let restart: Obj | undefined = serviceRestart ? { ...serviceRestart } : own ? { ...own } : undefined;
      if (serviceRestart && own) {
        if (getNum(own, "Limit") > 0) restart = { ...restart, Limit: own["Limit"] };
        if (has(own, "Grace")) restart = { ...restart, Grace: own["Grace"] };
        if (getBool(own, "IgnoreWarnings")) restart = { ...restart, IgnoreWarnings: true };
      }
      const header = getObj(check, "Header");
      let headerOut: Obj | null = null;
      if (header && Object.keys(header).length > 0) {
        headerOut = {};
        for (const [key, values] of Object.entries(header)) setOwn(headerOut, key, Array.isArray(values) && values.length > 0 ? values.slice() : null);
      }
      const args = getList(check, "Args");
      return {
        Name: getStr(check, "Name") || `service: ${goQuote(name)} check`,
        Type: getStr(check, "Type"),
        Command: getStr(check, "Command"),
        Args: args && args.length > 0 ? args.slice() : null,
        Path: getStr(check, "Path"),
        Protocol: getStr(check, "Protocol"),
        PortLabel: getStr(check, "PortLabel"),
        Expose: getBool(check, "Expose"),
        AddressMode: getStr(check, "AddressMode"),
        Interval: getNum(check, "Interval"),
        Timeout: getNum(check, "Timeout"),
        InitialStatus: getStr(check, "InitialStatus"),
        Notes: "", // not copied by ApiServicesToStructs
        TLSServerName: getStr(check, "TLSServerName"),
        TLSSkipVerify: getBool(check, "TLSSkipVerify"),
        Method: getStr(check, "Method"),
        Header: headerOut,
        CheckRestart: restart ? { Limit: getNum(restart, "Limit"), Grace: getNum(restart, "Grace", SECOND), IgnoreWarnings: getBool(restart, "IgnoreWarnings") } : null,
        GRPCService: getStr(check, "GRPCService"),
        GRPCUseTLS: getBool(check, "GRPCUseTLS"),
        // Group checks keep their own task; every check falls back to the service's task.
        TaskName: (taskName === null ? getStr(check, "TaskName") : "") || serviceTask,
        SuccessBeforePassing: Math.max(0, getNum(check, "SuccessBeforePassing")),
        FailuresBeforeCritical: Math.max(0, getNum(check, "FailuresBeforeCritical")),
        FailuresBeforeWarning: Math.max(0, getNum(check, "FailuresBeforeWarning")),
        Body: getStr(check, "Body"),
        OnUpdate: getStr(check, "OnUpdate") || onUpdate,
      };
    });
    const identity = getObj(svc, "Identity");
    const weights = getObj(svc, "Weights");
    return {
      Name: name,
      TaskName: serviceTask,
      PortLabel: getStr(svc, "PortLabel"),
      AddressMode: getStr(svc, "AddressMode") || "auto",
      Address: getStr(svc, "Address"),
      EnableTagOverride: getBool(svc, "EnableTagOverride"),
      Tags: nonEmptyStrings(svc["Tags"]),
      CanaryTags: nonEmptyStrings(svc["CanaryTags"]),
      Checks: checks.length > 0 ? checks : null,
      Connect: has(svc, "Connect") ? deepClone(svc["Connect"]) : null,
      Meta: nonEmptyMap(svc["Meta"]),
      CanaryMeta: nonEmptyMap(svc["CanaryMeta"]),
      // api ServiceWeights.Canonicalize: a weight of 0 or less becomes 1.
      Weights: weights ? { Passing: positiveOrOne(getNum(weights, "Passing")), Warning: positiveOrOne(getNum(weights, "Warning")) } : null,
      TaggedAddresses: nonEmptyMap(svc["TaggedAddresses"]),
      Namespace: provider === "consul" ? "default" : provider === "nomad" ? ctx.namespace : "",
      OnUpdate: onUpdate,
      Provider: provider,
      Cluster: getStr(svc, "Cluster") || "default",
      Identity: identity ? workloadIdentity(identity) : null,
    };
  });
}
