/**
 * Services and checks: structs Service.Validate with its checks' rules, and
 * the group- and task-level rules around them (which task a service or
 * check may name, address modes, duplicate names, port labels that must
 * exist).
 */
import { SECOND } from "../go.js";
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { block, dur, isSet, items, nested, num, str } from "./read.js";

const SERVICE_NAME = /^(?:[a-z0-9]|[a-z0-9][a-z0-9-]{0,61}[a-z0-9])$/i;
const ENV_REFERENCE = /\$\{[^}]*\}/g;

function validateCheck(check: Obj, provider: string): string | null {
  const type = str(check, "Type").toLowerCase();
  const allowed = provider === "nomad" ? ["tcp", "http"] : ["grpc", "tcp", "http", "script"];
  if (!allowed.includes(type)) return `invalid check type (${goQuote(type)}), must be one of ${allowed.join(", ")}`;
  if (type === "http") {
    const path = str(check, "Path");
    if (path === "") return "http type must have http path";
    if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return "http type must have relative http path";
  } else if (type === "script" && str(check, "Command") === "") {
    return "script type must have a valid script path";
  }
  const interval = num(check, "Interval");
  if (interval === 0) return `missing required value interval. Interval cannot be less than ${dur(SECOND)}`;
  if (interval < SECOND) return `interval (${dur(interval)}) cannot be lower than ${dur(SECOND)}`;
  const timeout = num(check, "Timeout");
  if (timeout === 0) return `missing required value timeout. Timeout cannot be less than ${dur(SECOND)}`;
  if (timeout < SECOND) return `timeout (${dur(timeout)}) is lower than required minimum timeout ${dur(SECOND)}`;
  const initial = str(check, "InitialStatus");
  if (!["", "passing", "warning", "critical"].includes(initial)) {
    return `invalid initial check state (${initial}), must be one of "passing", "warning", "critical" or empty`;
  }
  const addressMode = str(check, "AddressMode");
  if (addressMode === "auto") return `invalid address_mode ${goQuote(addressMode)} - auto only valid for services`;
  if (!["", "host", "driver", "alloc"].includes(addressMode)) return `invalid address_mode ${goQuote(addressMode)}`;
  const onUpdate = str(check, "OnUpdate");
  if (!["", "ignore", "require_healthy", "ignore_warnings"].includes(onUpdate)) {
    return `on_update must be "require_healthy", "ignore_warnings", or "ignore"; got ${goQuote(onUpdate)}`;
  }
  return null;
}

/** structs.Service.Validate (name, address mode, on_update, provider, checks). */
function validateService(svc: Obj): string[] {
  const errs: string[] = [];
  const name = str(svc, "Name");
  if (!SERVICE_NAME.test(name.replace(ENV_REFERENCE, "ENV-VAR"))) {
    errs.push(`Service name must be valid per RFC 1123 and can contain only alphanumeric characters or dashes and must be no longer than 63 characters: ${goQuote(name)}`);
  }
  const addressMode = str(svc, "AddressMode");
  if (["host", "driver", "alloc"].includes(addressMode)) {
    if (str(svc, "Address") !== "") errs.push(`Service address_mode must be "auto" if address is set`);
  } else if (addressMode !== "" && addressMode !== "auto") {
    errs.push(`Service address_mode must be "auto", "host", or "driver"; not ${goQuote(addressMode)}`);
  }
  const onUpdate = str(svc, "OnUpdate");
  if (!["", "ignore", "require_healthy", "ignore_warnings"].includes(onUpdate)) {
    errs.push(`Service on_update must be "require_healthy", "ignore_warnings", or "ignore"; not ${goQuote(onUpdate)}`);
  }
  const provider = str(svc, "Provider");
  if (provider !== "consul" && provider !== "nomad") {
    errs.push(`Service provider must be "consul", or "nomad"; not ${goQuote(provider)}`);
    return errs;
  }
  for (const check of items(svc, "Checks")) {
    const checkName = str(check, "Name");
    const type = str(check, "Type");
    if (str(svc, "PortLabel") === "" && str(check, "PortLabel") === "" && ["grpc", "http", "tcp"].includes(type)) {
      errs.push(`Check ${checkName} invalid: check requires a port but neither check nor service ${goQuote(name)} have a port`);
      continue;
    }
    const problem = validateCheck(check, provider);
    if (problem !== null) errs.push(provider === "consul" ? `Check ${checkName} invalid: ${problem}` : problem);
  }
  if (provider === "nomad" && isSet(svc, "Connect")) errs.push("Service with provider nomad cannot include Connect blocks");
  return errs;
}

function portLabelsOf(network: Obj): string[] {
  return [...items(network, "ReservedPorts"), ...items(network, "DynamicPorts")].map((p) => str(p, "Label"));
}

export function validateGroupServices(tg: Obj): string[] {
  const errs: string[] = [];
  const taskNames = new Set(items(tg, "Tasks").map((t) => str(t, "Name")));
  const providers = new Set<string>();
  for (const task of items(tg, "Tasks")) {
    for (const svc of items(task, "Services")) {
      const taskName = str(svc, "TaskName");
      if (taskName !== "" && taskName !== str(task, "Name")) {
        errs.push(`Service ${str(svc, "Name")} is invalid: may only specify task the service belongs to, got ${goQuote(taskName)}`);
      }
      for (const check of items(svc, "Checks")) {
        const checkTask = str(check, "TaskName");
        if (checkTask !== "" && checkTask !== str(task, "Name")) {
          errs.push(`Check ${str(check, "Name")} is invalid: may only specify task the check belongs to, got ${goQuote(checkTask)}`);
        }
      }
      providers.add(str(svc, "Provider"));
    }
  }
  items(tg, "Services").forEach((svc, i) => {
    providers.add(str(svc, "Provider"));
    const inner = validateService(svc);
    if (inner.length > 0) {
      errs.push(`Service[${i}] ${str(svc, "Name")} validation failed: ${nested(inner)}`);
      return;
    }
    if (str(svc, "AddressMode") === "driver") {
      errs.push(`service ${goQuote(str(svc, "Name"))} cannot use address_mode="driver", only services defined in a "task" block can use this mode`);
    }
    for (const check of items(svc, "Checks")) {
      const checkTask = str(check, "TaskName");
      if (checkTask === "") continue;
      if (str(check, "AddressMode") === "driver") {
        errs.push(`Check ${goQuote(str(svc, "Name"))} invalid: cannot use address_mode="driver", only checks defined in a "task" service block can use this mode`);
      }
      if (!taskNames.has(checkTask)) errs.push(`Check ${str(check, "Name")} invalid: refers to non-existent task ${checkTask}`);
    }
  });
  if (providers.size > 1) errs.push("Multiple service providers used: task group services must use the same provider");
  return errs;
}

export function validateTaskServices(task: Obj, tg: Obj): string[] {
  const errs: string[] = [];
  const servicePorts = new Map<string, Set<string>>();
  const addPort = (label: string, service: string): void => {
    const set = servicePorts.get(label) ?? new Set<string>();
    set.add(service);
    servicePorts.set(label, set);
  };
  const known = new Set<string>();
  items(task, "Services").forEach((svc, i) => {
    const name = str(svc, "Name");
    const inner = validateService(svc);
    if (inner.length > 0) errs.push(`service[${i}] ${goQuote(name)} validation failed: ${nested(inner)}`);
    if (str(svc, "AddressMode") === "alloc") {
      errs.push(`service ${goQuote(name)} cannot use address_mode="alloc", only services defined in a "group" block can use this mode`);
    }
    const portLabel = str(svc, "PortLabel");
    if (known.has(name + portLabel)) errs.push(`service ${goQuote(name)} is duplicate`);
    known.add(name + portLabel);
    if (portLabel !== "" && !(str(svc, "AddressMode") === "driver" && /^[+-]?[0-9]+$/.test(portLabel))) addPort(portLabel, name);
    if (isSet(svc, "Connect")) errs.push(`service ${goQuote(name)} cannot have "connect" block, only services defined in a "group" block can`);
    const checkNames = new Set<string>();
    for (const check of items(svc, "Checks")) {
      const checkName = str(check, "Name");
      if (checkNames.has(checkName)) errs.push(`check ${goQuote(checkName)} is duplicate`);
      checkNames.add(checkName);
      if (str(check, "AddressMode") === "alloc") {
        errs.push(`check ${goQuote(name)} cannot use address_mode="alloc", only checks defined in a "group" service block can use this mode`);
      }
      if (!["grpc", "http", "tcp"].includes(str(check, "Type"))) continue;
      const effective = str(check, "PortLabel") || portLabel;
      if (effective === "") {
        errs.push(`check ${goQuote(checkName)} is missing a port`);
        continue;
      }
      if (/^[+-]?[0-9]+$/.test(effective)) {
        const portNumber = Number(effective);
        if (str(check, "AddressMode") === "driver") {
          if (portNumber <= 0) errs.push(`check ${goQuote(checkName)} has invalid numeric port ${portNumber}`);
        } else {
          errs.push(`check ${goQuote(checkName)} cannot use a numeric port ${portNumber} without setting address_mode="driver"`);
        }
        continue;
      }
      addPort(effective, name);
    }
  });
  const labels = new Set<string>();
  const firstNetwork = items(tg, "Networks")[0];
  if (firstNetwork) for (const label of portLabelsOf(firstNetwork)) labels.add(label);
  for (const network of items(block(task, "Resources"), "Networks")) for (const label of portLabelsOf(network)) labels.add(label);
  for (const label of [...servicePorts.keys()].sort()) {
    if (labels.has(label)) continue;
    const names = [...(servicePorts.get(label) ?? [])].sort();
    errs.push(`port label ${goQuote(label)} referenced by services ${names.join(", ")} does not exist`);
  }
  return errs;
}
