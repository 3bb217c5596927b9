/**
 * What jobspec2 does to a decoded job before handing it out (its
 * `normalizeJob`): job-level tasks become groups of their own, the group
 * and job `vault` blocks are inherited by tasks without one, vault and
 * template defaults are filled, ports with a static value move to
 * `ReservedPorts`, the default workload identity moves to `Identity`, and a
 * periodic block gets its spec type.
 */
import { zeroStruct } from "./api-structs.js";
import type { Obj } from "./decode.js";

const objs = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

export function normalizeJob(job: Obj, label: string): void {
  const jobVault = job["__vault"] as Obj | undefined;
  const jobTasks = (job["__tasks"] as Obj[] | undefined) ?? [];
  delete job["__vault"];
  delete job["__tasks"];

  job["ID"] ??= label;
  job["Name"] ??= label;

  const periodic = job["Periodic"] as Obj | null;
  if (periodic && (periodic["Spec"] !== null || periodic["Specs"] !== null)) periodic["SpecType"] = "cron";

  // Tasks written directly in the job become one group each, ahead of the file's groups.
  if (jobTasks.length) {
    const outside = jobTasks.map((task) => ({ ...zeroStruct("TaskGroup"), Name: task["Name"], Tasks: [task] }));
    job["TaskGroups"] = [...outside, ...objs(job["TaskGroups"])];
  }

  if (jobVault) vaultDefaults(jobVault);
  for (const group of objs(job["TaskGroups"])) {
    const groupVault = group["__vault"] as Obj | undefined;
    delete group["__vault"];
    if (groupVault) vaultDefaults(groupVault);
    for (const net of objs(group["Networks"])) splitPorts(net);
    for (const task of objs(group["Tasks"])) {
      if (task["Vault"]) vaultDefaults(task["Vault"] as Obj);
      else if (groupVault) task["Vault"] = structuredClone(groupVault);
      else if (jobVault) task["Vault"] = structuredClone(jobVault);
      const resources = task["Resources"] as Obj | null;
      for (const net of objs(resources?.["Networks"])) splitPorts(net);
      for (const template of objs(task["Templates"])) templateDefaults(template);
      moveDefaultIdentity(task);
    }
  }
}

function vaultDefaults(vault: Obj): void {
  vault["Env"] ??= true;
  vault["DisableFile"] ??= false;
  vault["ChangeMode"] ??= "restart";
}

function templateDefaults(template: Obj): void {
  template["ChangeMode"] ??= "restart";
  template["Perms"] ??= "0644";
  template["Splay"] ??= 5_000_000_000;
  template["ErrMissingKey"] ??= false;
  const script = template["ChangeScript"] as Obj | null;
  if (script) {
    script["Args"] ??= [];
    script["Timeout"] ??= 5_000_000_000;
    script["FailOnError"] ??= false;
  }
}

/**
 * Every `port` block decodes as dynamic; those with a static value are
 * reserved ports. As in jobspec2, when there are `port` blocks the reserved
 * list is rebuilt from them alone (a `reserved_ports` block is then dropped).
 */
function splitPorts(net: Obj): void {
  const ports = objs(net["DynamicPorts"]);
  if (!ports.length) return;
  const reserved = ports.filter((p) => (p["Value"] as number) > 0);
  const dynamic = ports.filter((p) => !((p["Value"] as number) > 0));
  net["ReservedPorts"] = reserved.length ? reserved : null;
  net["DynamicPorts"] = dynamic.length ? dynamic : null;
}

/**
 * jobspec2 moves the first identity named "" or "default" to `Identity` and
 * deletes it from `Identities` with slices.Delete, so a task whose only
 * identity was the default one keeps an empty list (`[]`, not null), and a
 * second default identity stays in the list.
 */
function moveDefaultIdentity(task: Obj): void {
  const identities = objs(task["Identities"]);
  const index = identities.findIndex((identity) => identity["Name"] === "" || identity["Name"] === "default");
  if (index < 0) return;
  task["Identity"] = identities[index];
  task["Identities"] = identities.filter((_, i) => i !== index);
}
