/**
 * The constraints Nomad's admission adds to a canonical task group for what
 * its tasks use (Vault, signals, Nomad and Consul services).
 */
import type { Obj } from "../objects.js";

const VAULT_CONSTRAINT = { LTarget: "${attr.vault.version}", RTarget: ">= 0.6.1", Operand: "semver" };
const CONSUL_CONSTRAINT = { LTarget: "${attr.consul.version}", RTarget: ">= 1.7.0", Operand: "semver" };
const NOMAD_SD_CONSTRAINT = { LTarget: "${attr.nomad.service_discovery}", RTarget: "true", Operand: "=" };
const NOMAD_CHECKS_CONSTRAINT = { LTarget: "${attr.nomad.version}", RTarget: ">= 1.4.0", Operand: "semver" };

/**
 * The jobImpliedConstraints admission mutator (nomad/job_endpoint_hooks.go):
 * groups using Vault, signals, Nomad or Consul services get the constraints
 * that keep them off clients which cannot run them. "Left" matching skips the
 * constraint when the group already constrains the same attribute.
 */
export function addImpliedConstraints(tg: Obj): void {
  const list = (): Obj[] => (tg["Constraints"] as Obj[] | null) ?? [];
  const add = (constraint: Obj, leftOnly: boolean): void => {
    const found = list().some((c) =>
      leftOnly
        ? c["LTarget"] === constraint["LTarget"]
        : c["LTarget"] === constraint["LTarget"] && c["RTarget"] === constraint["RTarget"] && c["Operand"] === constraint["Operand"],
    );
    if (!found) tg["Constraints"] = [...list(), { ...constraint }];
  };
  const tasks = (tg["Tasks"] as Obj[] | null) ?? [];
  const taskServices = tasks.flatMap((t) => (t["Services"] as Obj[] | null) ?? []);
  const groupServices = (tg["Services"] as Obj[] | null) ?? [];
  const allServices = [...groupServices, ...taskServices];

  const vaultTasks = tasks.filter((t) => t["Vault"] !== null).sort((a, b) => (String(a["Name"]) < String(b["Name"]) ? -1 : 1));
  for (const t of vaultTasks) {
    const cluster = String((t["Vault"] as Obj)["Cluster"]);
    add(cluster === "default" || cluster === "" ? VAULT_CONSTRAINT : { ...VAULT_CONSTRAINT, LTarget: `\${attr.vault.${cluster}.version}` }, true);
  }

  const signals = new Set<string>();
  for (const t of tasks) {
    const vault = t["Vault"] as Obj | null;
    if (vault && vault["ChangeMode"] === "signal") signals.add(String(vault["ChangeSignal"]));
    if (t["KillSignal"] !== "") signals.add(String(t["KillSignal"]));
    for (const tmpl of (t["Templates"] as Obj[] | null) ?? []) if (tmpl["ChangeMode"] === "signal") signals.add(String(tmpl["ChangeSignal"]));
  }
  if (signals.size > 0) add({ Operand: "set_contains", LTarget: "${attr.os.signals}", RTarget: [...signals].sort().join(",") }, false);

  const nomadServices = allServices.filter((svc) => svc["Provider"] === "nomad");
  if (nomadServices.length > 0) add(NOMAD_SD_CONSTRAINT, false);
  if (nomadServices.some((svc) => ((svc["Checks"] as Obj[] | null) ?? []).length > 0)) add(NOMAD_CHECKS_CONSTRAINT, false);

  // Nomad walks the group's services here, so task-only Consul services add nothing.
  const consulConstraint = (svc: Obj): Obj => {
    const cluster = String(svc["Cluster"]);
    return cluster === "default" || cluster === "" ? CONSUL_CONSTRAINT : { ...CONSUL_CONSTRAINT, LTarget: `\${attr.consul.${cluster}.version}` };
  };
  if (allServices.some((svc) => svc["Provider"] === "consul")) {
    for (const svc of groupServices) {
      if (svc["Provider"] === "consul") add(consulConstraint(svc), true);
      for (const taskService of taskServices) if (taskService["Provider"] === "consul") add(consulConstraint(taskService), true);
    }
  }
}
