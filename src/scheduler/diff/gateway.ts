/**
 * A Connect gateway: its proxy (bind addresses, config), ingress listeners and
 * services (TLS, header modifiers), terminating services and mesh.
 */
import { formatGoDuration } from "../../core/durations.js";
import { configDiff, keyedDiffs, structDiff } from "./combinators.js";
import { deepEqual } from "../../core/go/deep-equal.js";
import { fmtPrim } from "../../core/go/format.js";
import { fieldDiffs, primitiveObjectDiff, stringSetDiff } from "./primitives.js";
import type { DiffType, Flat, OD, Obj } from "./types.js";
import { isNil, obj, str } from "./values.js";

export function gatewayDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("Gateway", prev, next, contextual, {
    objects: (p, n) => [
      structDiff("Proxy", p["Proxy"], n["Proxy"], contextual, {
        flat: { skip: ["ConnectTimeout"] },
        extraFields: (pp, pn, oldFlat, newFlat) => {
          if (!oldFlat || !newFlat) return;
          oldFlat.set("ConnectTimeout", typeof pp["ConnectTimeout"] === "number" ? formatGoDuration(BigInt(pp["ConnectTimeout"])) : "");
          newFlat.set("ConnectTimeout", typeof pn["ConnectTimeout"] === "number" ? formatGoDuration(BigInt(pn["ConnectTimeout"])) : "");
        },
        objects: (pp, pn) => [
          bindAddressesDiff(pp["EnvoyGatewayBindAddresses"], pn["EnvoyGatewayBindAddresses"], contextual),
          configDiff("Config", pp["Config"], pn["Config"], contextual),
        ],
      }),
      structDiff("Ingress", p["Ingress"], n["Ingress"], contextual, {
        objects: (ip, inn) => [
          gatewayTLSDiff(ip["TLS"], inn["TLS"], contextual),
          keyedDiffs(
            ip["Listeners"],
            inn["Listeners"],
            (l) => `${str(l, "Protocol")}/${str(l, "Port") || "0"}`,
            (lo, ln) =>
              structDiff("Listener", lo, ln, contextual, {
                objects: (lp, lnn) => [
                  keyedDiffs(
                    lp["Services"],
                    lnn["Services"],
                    (s) => str(s, "Name"),
                    (so, sn) => ingressServiceDiff(so, sn, contextual),
                  ),
                ],
              }),
          ),
        ],
      }),
      structDiff("Terminating", p["Terminating"], n["Terminating"], contextual, {
        objects: (tp, tn) => [
          keyedDiffs(
            tp["Services"],
            tn["Services"],
            (s) => str(s, "Name"),
            (so, sn) => structDiff("Service", so, sn, contextual),
          ),
        ],
      }),
      deepEqual(p["Mesh"], n["Mesh"]) ? null : { Type: isNil(p["Mesh"]) ? "Added" : isNil(n["Mesh"]) ? "Deleted" : "Edited", Name: "Mesh", Fields: [], Objects: [] },
    ],
  });
}

function gatewayTLSDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff("TLS", prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["CipherSuites"], n["CipherSuites"], "CipherSuites", contextual), primitiveObjectDiff(p["SDS"], n["SDS"], null, "SDS", contextual)],
  });
}

function ingressServiceDiff(prev: Obj | null, next: Obj | null, contextual: boolean): OD | null {
  const pointers = ["MaxConnections", "MaxPendingRequests", "MaxConcurrentRequests"];
  return structDiff("ConsulIngressService", prev, next, contextual, {
    flat: { skip: pointers },
    extraFields: (p, n, oldFlat, newFlat) => {
      for (const key of pointers) {
        if (oldFlat && !isNil(p[key])) oldFlat.set(key, fmtPrim(p[key]));
        if (newFlat && !isNil(n[key])) newFlat.set(key, fmtPrim(n[key]));
      }
    },
    objects: (p, n) => [
      stringSetDiff(p["Hosts"], n["Hosts"], "Hosts", contextual),
      gatewayTLSDiff(p["TLS"], n["TLS"], contextual),
      headerModifiersDiff("RequestHeaders", p["RequestHeaders"], n["RequestHeaders"], contextual),
      headerModifiersDiff("ResponseHeaders", p["ResponseHeaders"], n["ResponseHeaders"], contextual),
    ],
  });
}

function headerModifiersDiff(name: string, prev: unknown, next: unknown, contextual: boolean): OD | null {
  return structDiff(name, prev, next, contextual, {
    objects: (p, n) => [stringSetDiff(p["Remove"], n["Remove"], "Remove", contextual)],
  });
}

function bindAddressesDiff(prev: unknown, next: unknown, contextual: boolean): OD | null {
  if (deepEqual(prev, next)) return null;
  const p = obj(prev) ?? {};
  const n = obj(next) ?? {};
  const type: DiffType = Object.keys(p).length === 0 ? "Added" : Object.keys(n).length === 0 ? "Deleted" : "Edited";
  const join = (m: Obj): Flat => {
    const out: Flat = new Map();
    for (const [k, v] of Object.entries(m)) {
      const host = str(obj(v), "Address");
      const port = str(obj(v), "Port") || "0";
      out.set(k, host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`);
    }
    return out;
  };
  return { Type: type, Name: "EnvoyGatewayBindAddresses", Fields: fieldDiffs(join(p), join(n), contextual), Objects: [] };
}
