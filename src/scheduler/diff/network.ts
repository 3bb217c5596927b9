/**
 * Network blocks (group and task resources): networks matched by content,
 * their static and dynamic ports, DNS and CNI settings.
 */
import { structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenAll } from "./flatmap.js";
import { hashKey } from "./hash-key.js";
import { sortObjects } from "./order.js";
import { fieldDiffs, primitiveObjectDiff, typeFromFields } from "./primitives.js";
import type { DiffType, Flat, OD, Obj } from "./types.js";
import { obj, objList, str, strList } from "./values.js";

/** NetworkResource and Port are omitempty in the canonical JSON; Go flattens their zero fields. */
const NETWORK_ZERO: Obj = { Mode: "", Device: "", CIDR: "", IP: "", Hostname: "", MBits: 0 };
const PORT_ZERO: Obj = { Label: "", Value: 0, To: 0, HostNetwork: "", IgnoreCollision: false };

export function networkResourceDiffs(oldList: unknown, newList: unknown, contextual: boolean): OD[] {
  const makeSet = (items: unknown): Map<string, Obj> => {
    const set = new Map<string, Obj>();
    for (const n of objList(items)) set.set(hashKey({ ...NETWORK_ZERO, ...n }), n);
    return set;
  };
  const oldSet = makeSet(oldList);
  const newSet = makeSet(newList);
  const diffs: OD[] = [];
  for (const [k, o] of oldSet) {
    if (newSet.has(k)) continue;
    const d = networkResourceDiff(o, null, contextual);
    if (d) diffs.push(d);
  }
  for (const [k, n] of newSet) {
    if (oldSet.has(k)) continue;
    const d = networkResourceDiff(null, n, contextual);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

function networkResourceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  return structDiff("Network", prev, next, contextual, {
    flat: { filter: ["_struct", "Device", "CIDR", "IP", "MBits"], defaults: NETWORK_ZERO },
    objects: (p, n) => [
      portDiffs(p["ReservedPorts"], n["ReservedPorts"], false, contextual),
      portDiffs(p["DynamicPorts"], n["DynamicPorts"], true, contextual),
      dnsDiff(p["DNS"], n["DNS"], contextual),
      cniDiff(p["CNI"], n["CNI"], contextual),
    ],
  });
}

function portDiffs(oldList: unknown, newList: unknown, dynamic: boolean, contextual: boolean): OD[] {
  const filter = dynamic ? ["_struct", "Value", "IgnoreCollision"] : ["_struct"];
  const name = dynamic ? "Dynamic Port" : "Static Port";
  const oldPorts = new Map<string, Obj>();
  const newPorts = new Map<string, Obj>();
  for (const p of objList(oldList)) oldPorts.set(str(p, "Label"), p);
  for (const p of objList(newList)) newPorts.set(str(p, "Label"), p);
  const diffs: OD[] = [];
  for (const [label, p] of oldPorts) {
    const d = primitiveObjectDiff(p, newPorts.get(label) ?? null, filter, name, contextual, PORT_ZERO);
    if (d) diffs.push(d);
  }
  for (const [label, p] of newPorts) {
    if (oldPorts.has(label)) continue;
    const d = primitiveObjectDiff(null, p, filter, name, contextual, PORT_ZERO);
    if (d) diffs.push(d);
  }
  return sortObjects(diffs);
}

function dnsDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const flatten = (conf: Obj): Flat => {
    const m: Flat = new Map();
    for (const key of ["Servers", "Searches", "Options"]) {
      const values = strList(conf[key]);
      if (values.length > 0) m.set(key, values.join(","));
    }
    return m;
  };
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  return { Type: type, Name: "DNS", Fields: fieldDiffs(p ? flatten(p) : null, n ? flatten(n) : null, contextual), Objects: [] };
}

function cniDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  const p = obj(obj(prev)?.["Args"]) ?? {};
  const n = obj(obj(next)?.["Args"]) ?? {};
  if (deepEqual(p, n)) return null;
  const fields = fieldDiffs(flattenAll(p, false), flattenAll(n, false), contextual);
  const type = typeFromFields(fields);
  return type ? { Type: type, Name: "CNIConfig", Fields: fields, Objects: [] } : null;
}
