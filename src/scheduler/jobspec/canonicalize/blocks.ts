/**
 * Converters for the small blocks jobs, groups and tasks share
 * (ApiXToStructs plus Canonicalize): constraints, affinities, spreads,
 * networks and ports, workload identities, Consul blocks and scaling
 * policies.
 *
 * Known approximations: `NetworkResource` and `Port` carry a struct-level
 * `codec:",omitempty"` marker in Nomad, so their zero fields are left out
 * here as well; scaling policy IDs are left "" (the state store assigns
 * UUIDs).
 */
import { deepClone, isPlainObject, type Obj } from "../objects.js";
import { cloneStrings, getBool, getList, getNum, getObj, getObjList, getStr, has } from "./accessors.js";
import type { JobContext } from "./context.js";

export function constraints(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((c) => {
    const o = isPlainObject(c) ? c : {};
    return { LTarget: getStr(o, "LTarget"), RTarget: getStr(o, "RTarget"), Operand: getStr(o, "Operand") };
  });
}

export function affinities(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((a) => {
    const o = isPlainObject(a) ? a : {};
    return { LTarget: getStr(o, "LTarget"), RTarget: getStr(o, "RTarget"), Operand: getStr(o, "Operand"), Weight: getNum(o, "Weight", 50) };
  });
}

export function spreads(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((s) => {
    const o = isPlainObject(s) ? s : {};
    const targets = getList(o, "SpreadTarget");
    return {
      Attribute: getStr(o, "Attribute"),
      Weight: getNum(o, "Weight", 50),
      SpreadTarget: targets ? targets.map((t) => ({ Value: getStr(t as Obj, "Value"), Percent: getNum(t as Obj, "Percent") })) : null,
    };
  });
}

/** structs.Port; a struct-level `codec:",omitempty"` leaves zero fields out. */
export function port(p: Obj): Obj {
  const out: Obj = {};
  if (getStr(p, "Label") !== "") out["Label"] = getStr(p, "Label");
  if (getNum(p, "Value") !== 0) out["Value"] = getNum(p, "Value");
  if (getNum(p, "To") !== 0) out["To"] = getNum(p, "To");
  out["HostNetwork"] = getStr(p, "HostNetwork") || "default"; // NetworkResource.Canonicalize
  if (getBool(p, "IgnoreCollision")) out["IgnoreCollision"] = true;
  return out;
}

/** ApiNetworkResourceToStructs + NetworkResource.Canonicalize, zero fields omitted (see port). */
export function networks(list: unknown[] | undefined): Obj[] | null {
  if (!list || list.length === 0) return null;
  return list.map((n) => {
    const o = isPlainObject(n) ? n : {};
    const out: Obj = {};
    for (const key of ["Mode", "CIDR", "IP", "Hostname"]) if (getStr(o, key) !== "") out[key] = getStr(o, key);
    if (getNum(o, "MBits") !== 0) out["MBits"] = getNum(o, "MBits");
    const dns = getObj(o, "DNS");
    if (dns) out["DNS"] = { Servers: cloneStrings(dns["Servers"]), Searches: cloneStrings(dns["Searches"]), Options: cloneStrings(dns["Options"]) };
    const reserved = getObjList(o, "ReservedPorts");
    if (reserved.length > 0) out["ReservedPorts"] = reserved.map(port);
    const dynamic = getObjList(o, "DynamicPorts");
    if (dynamic.length > 0) out["DynamicPorts"] = dynamic.map(port);
    return out;
  });
}

export function workloadIdentity(o: Obj): Obj {
  return {
    Name: getStr(o, "Name"),
    Audience: cloneStrings(o["Audience"]),
    ChangeMode: getStr(o, "ChangeMode"),
    ChangeSignal: getStr(o, "ChangeSignal"),
    Env: getBool(o, "Env"),
    File: getBool(o, "File"),
    Filepath: getStr(o, "Filepath"),
    ServiceName: getStr(o, "ServiceName"),
    TTL: getNum(o, "TTL"),
  };
}

/** structs.WorkloadIdentity.Canonicalize */
export function canonicalizeIdentity(wid: Obj): void {
  if (wid["Name"] === "") wid["Name"] = "default";
  if (wid["Name"] === "default") wid["Audience"] = ["nomadproject.io"];
  if (wid["ChangeSignal"] !== "") wid["ChangeSignal"] = String(wid["ChangeSignal"]).toUpperCase();
}

export function consulBlock(consul: Obj | undefined, inheritedNamespace: string | null): Obj {
  return {
    Namespace: getStr(consul, "Namespace") || (inheritedNamespace ?? ""),
    Cluster: getStr(consul, "Cluster") || "default",
    Partition: getStr(consul, "Partition"),
  };
}

export function scalingPolicy(policy: Obj, count: number, ctx: JobContext, group: string, task: string | null): Obj {
  const target: Obj = { Namespace: ctx.namespace, Job: ctx.id, Group: group };
  if (task !== null) target["Task"] = task;
  return {
    ID: "", // assigned by the state store
    Type: getStr(policy, "Type") || "horizontal",
    Target: target,
    Policy: isPlainObject(policy["Policy"]) ? deepClone(policy["Policy"]) : null,
    Min: has(policy, "Min") ? getNum(policy, "Min") : count,
    Max: has(policy, "Max") ? getNum(policy, "Max") : -1,
    Enabled: getBool(policy, "Enabled", true),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}
