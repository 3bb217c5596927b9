/**
 * A service's Consul Connect block: sidecar service and task, the proxy with
 * its upstreams, expose paths and transparent proxy; gateways are in gateway.ts.
 * Connect blocks are kept as the client sent them, so shapes are those of api.*.
 */
import { configDiff, keyedDiffs, structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { flattenPrim } from "./flatmap.js";
import { gatewayDiff } from "./gateway.js";
import { fieldDiffs, primitiveObjectDiff, primitiveObjectSetDiff, stringSetDiff } from "./primitives.js";
import { resourcesDiff } from "./resources.js";
import type { DiffType, OD } from "./types.js";
import { isObj, list, obj, str } from "./values.js";

export function connectDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("ConsulConnect", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("SidecarService", p["SidecarService"], n["SidecarService"], contextual, {
        objects: (sp, sn) => [consulProxyDiff(sp["Proxy"], sn["Proxy"], contextual)],
      }),
      structDiff("SidecarTask", p["SidecarTask"], n["SidecarTask"], contextual, {
        flat: { skip: ["KillTimeout", "ShutdownDelay"] },
        fieldsContextual: false,
        objects: (tp, tn) => [
          configDiff("Config", tp["Config"], tn["Config"], contextual),
          resourcesDiff(tp["Resources"], tn["Resources"], contextual),
          primitiveObjectDiff(tp["LogConfig"], tn["LogConfig"], null, "LogConfig", contextual),
        ],
      }),
      gatewayDiff(p["Gateway"], n["Gateway"], contextual),
    ],
  });
}

function consulProxyDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("ConsulProxy", prev, next, contextual, {
    objects: (p, n) => [
      keyedDiffs(
        p["Upstreams"],
        n["Upstreams"],
        (u) => `${str(u, "Datacenter")}/${str(u, "DestinationName")}`,
        (o, nn) =>
          structDiff("ConsulUpstreams", o, nn, contextual, {
            objects: (up, un) => [primitiveObjectDiff(up["MeshGateway"], un["MeshGateway"], null, "MeshGateway", contextual)],
          }),
      ),
      exposeDiff(p["Expose"] ?? p["ExposeConfig"], n["Expose"] ?? n["ExposeConfig"], contextual),
      transparentProxyDiff(p["TransparentProxy"], n["TransparentProxy"], contextual),
      configDiff("Config", p["Config"], n["Config"], contextual),
    ],
  });
}

function exposeDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const paths = (e: unknown): unknown => obj(e)?.["Paths"] ?? obj(e)?.["Path"] ?? null;
  const empty = (e: unknown): boolean => !isObj(e) || list(paths(e)).length === 0;
  const type: DiffType = empty(prev) ? "Added" : empty(next) ? "Deleted" : "Edited";
  return { Type: type, Name: "Expose", Fields: [], Objects: primitiveObjectSetDiff(paths(prev), paths(next), null, "Paths", contextual) };
}

/** consulTProxyDiff; like Nomad it yields an empty "None" diff when both sides are equal. */
function transparentProxyDiff(prev: unknown, next: unknown, contextual: boolean): OD {
  if (deepEqual(prev, next)) return { Type: "None", Name: "TransparentProxy", Fields: [], Objects: [] };
  const p = obj(prev);
  const n = obj(next);
  const type: DiffType = !p ? "Added" : !n ? "Deleted" : "Edited";
  const fields = fieldDiffs(p ? flattenPrim(p) : null, n ? flattenPrim(n) : null, contextual);
  const objects: OD[] = [];
  for (const key of ["ExcludeInboundPorts", "ExcludeOutboundPorts", "ExcludeOutboundCIDRs", "ExcludeUIDs"]) {
    const d = stringSetDiff(p?.[key], n?.[key], key, contextual);
    if (d && d.Type !== "None") objects.push(d);
  }
  return { Type: type, Name: "TransparentProxy", Fields: fields, Objects: objects };
}
