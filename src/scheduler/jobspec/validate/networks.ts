/**
 * A task group's networks (structs TaskGroup.validateNetworks): port labels
 * unique across the group and its tasks, static ports not reserved twice on
 * a host network, port values and mappings in range.
 */
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { block, flag, items, num, str } from "./read.js";

export function validateGroupNetworks(tg: Obj): string[] {
  const errs: string[] = [];
  const labels = new Map<string, string>();
  const staticPorts = new Map<string, Map<number, string>>();
  for (const network of items(tg, "Networks")) {
    const mode = str(network, "Mode");
    for (const p of [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")]) {
      const label = str(p, "Label");
      const other = labels.get(label);
      if (other !== undefined) errs.push(`Port label ${label} already in use by ${other}`);
      else labels.set(label, "taskgroup network");
      const value = num(p, "Value");
      if (value !== 0) {
        const hostNetwork = str(p, "HostNetwork") || "default";
        const used = staticPorts.get(hostNetwork) ?? new Map<number, string>();
        const owner = used.get(value);
        if (owner !== undefined) {
          if (!flag(p, "IgnoreCollision")) errs.push(`Static port ${value} already reserved by ${owner}`);
        } else if (value > 65535) {
          errs.push(`Port ${label} (${value}) cannot be greater than 65535`);
        } else {
          used.set(value, `taskgroup network:${label}`);
          staticPorts.set(hostNetwork, used);
        }
      }
      const to = num(p, "To");
      if (to < -1) errs.push(`Port ${goQuote(label)} cannot be mapped to negative value ${to}`);
      else if (to > 65535) errs.push(`Port ${goQuote(label)} cannot be mapped to a port (${to}) greater than 65535`);
      if (flag(p, "IgnoreCollision") && !(mode === "" || mode === "host")) {
        errs.push(`Port ${goQuote(label)} collision may not be ignored on non-host network mode ${goQuote(mode)}`);
      }
    }
  }
  for (const task of items(tg, "Tasks")) {
    for (const network of items(block(task, "Resources"), "Networks")) {
      for (const p of [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")]) {
        const label = str(p, "Label");
        const other = labels.get(label);
        if (other !== undefined) errs.push(`Port label ${label} already in use by ${other}`);
        const value = num(p, "Value");
        if (value !== 0) {
          const hostNetwork = str(p, "HostNetwork") || "default";
          const used = staticPorts.get(hostNetwork) ?? new Map<number, string>();
          const owner = used.get(value);
          if (owner !== undefined) errs.push(`Static port ${value} already reserved by ${owner}`);
          else if (value > 65535) errs.push(`Port ${label} (${value}) cannot be greater than 65535`);
          else {
            used.set(value, `${str(task, "Name")}:${label}`);
            staticPorts.set(hostNetwork, used);
          }
        }
      }
    }
  }
  return errs;
}
