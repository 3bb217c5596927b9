/**
 * A task as the server stores it: resources, restart policy (the group's with
 * the task's fields over it), Vault, templates, artifacts, volume mounts,
 * scaling policies, actions and workload identities (the default identity is
 * always present). A task's `Schedule` block is kept as the client sent it.
 */
import { pathBase, pathJoin, SECOND } from "../go.js";
import { deepClone, type Obj } from "../objects.js";
import { cloneStrings, getBool, getList, getNum, getObj, getObjList, getStr, has, nonEmptyMap, nonEmptyStrings, optNum } from "./accessors.js";
import { affinities, canonicalizeIdentity, constraints, consulBlock, networks, scalingPolicy, workloadIdentity } from "./blocks.js";
import type { JobContext } from "./context.js";
import { mergePresent } from "./defaults.js";
import { services } from "./services.js";

/** api Resources.Canonicalize + ApiResourcesToStructs */
function taskResources(t: Obj): Obj {
  const res = getObj(t, "Resources") ?? {};
  const coresSet = has(res, "Cores");
  const cpu = has(res, "CPU") ? getNum(res, "CPU") : coresSet ? 0 : 100;
  const devices = getObjList(res, "Devices");
  const numa = getObj(res, "NUMA");
  const resources: Obj = {
    CPU: cpu,
    Cores: getNum(res, "Cores"),
    MemoryMB: getNum(res, "MemoryMB", 300),
    MemoryMaxMB: getNum(res, "MemoryMaxMB"),
    DiskMB: getNum(res, "DiskMB"),
    IOPS: getNum(res, "IOPS"),
    Networks: networks(getList(res, "Networks")),
    Devices:
      devices.length > 0
        ? devices.map((d) => ({
            Name: getStr(d, "Name"),
            Count: getNum(d, "Count", 1),
            Constraints: constraints(getList(d, "Constraints")),
            Affinities: affinities(getList(d, "Affinities")),
          }))
        : null,
    NUMA: numa ? { Affinity: getStr(numa, "Affinity") || "none", Devices: nonEmptyStrings(numa["Devices"]) } : null,
    // api Resources.Canonicalize gives `secrets` no default: unset is 0.
    SecretsMB: getNum(res, "SecretsMB"),
  };
  return resources;
}

/** api Vault.Canonicalize; the job's vault namespace fills an empty one. */
function vaultBlock(vault: Obj, ctx: JobContext): Obj {
  const changeSignal = has(vault, "ChangeSignal") ? getStr(vault, "ChangeSignal").toUpperCase() : "SIGHUP";
  return {
    Role: getStr(vault, "Role"),
    Policies: cloneStrings(vault["Policies"]),
    Namespace: getStr(vault, "Namespace") || ctx.vaultNamespace,
    Cluster: getStr(vault, "Cluster") || "default",
    Env: getBool(vault, "Env", true),
    DisableFile: getBool(vault, "DisableFile"),
    ChangeMode: getStr(vault, "ChangeMode", "restart") || "restart",
    ChangeSignal: changeSignal,
    AllowTokenExpiration: getBool(vault, "AllowTokenExpiration"),
  };
}

function template(tmpl: Obj): Obj {
  const changeMode = getStr(tmpl, "ChangeMode", "restart");
  const changeSignal = has(tmpl, "ChangeSignal") ? getStr(tmpl, "ChangeSignal").toUpperCase() : changeMode === "signal" ? "SIGHUP" : "";
  const script = getObj(tmpl, "ChangeScript");
  const wait = getObj(tmpl, "Wait");
  return {
    SourcePath: getStr(tmpl, "SourcePath"),
    DestPath: getStr(tmpl, "DestPath"),
    EmbeddedTmpl: getStr(tmpl, "EmbeddedTmpl"),
    ChangeMode: changeMode,
    ChangeSignal: changeSignal,
    ChangeScript: script
      ? {
          Command: getStr(script, "Command"),
          Args: cloneStrings(script["Args"]) ?? [],
          Timeout: getNum(script, "Timeout", 5 * SECOND),
          FailOnError: getBool(script, "FailOnError"),
        }
      : null,
    Splay: getNum(tmpl, "Splay", 5 * SECOND),
    Perms: getStr(tmpl, "Perms", "0644"),
    Uid: optNum(tmpl, "Uid"),
    Gid: optNum(tmpl, "Gid"),
    LeftDelim: getStr(tmpl, "LeftDelim", "{{"),
    RightDelim: getStr(tmpl, "RightDelim", "}}"),
    Envvars: getBool(tmpl, "Envvars"),
    VaultGrace: getNum(tmpl, "VaultGrace"),
    Wait: wait ? { Min: optNum(wait, "Min"), Max: optNum(wait, "Max") } : null,
    ErrMissingKey: getBool(tmpl, "ErrMissingKey"),
  };
}

function artifact(a: Obj): Obj {
  const mode = getStr(a, "GetterMode", "any");
  const source = getStr(a, "GetterSource");
  const dest = has(a, "RelativeDest") ? getStr(a, "RelativeDest") : mode === "file" ? pathJoin("local", pathBase(source)) : "local/";
  return {
    GetterSource: source,
    GetterOptions: nonEmptyMap(a["GetterOptions"]),
    GetterHeaders: nonEmptyMap(a["GetterHeaders"]),
    GetterMode: mode,
    GetterInsecure: getBool(a, "GetterInsecure"),
    RelativeDest: dest,
    Chown: getBool(a, "Chown"),
  };
}

/**
 * Workload identities (structs Task.Canonicalize): the default identity
 * moves out of Identities into Identity, and one is created when absent.
 */
function taskIdentities(t: Obj): { identity: Obj; identities: Obj[] | null } {
  const given = getObj(t, "Identity");
  let identity: Obj | null = given ? workloadIdentity(given) : null;
  let identities: Obj[] | null = null;
  const widList = getObjList(t, "Identities");
  if (widList.length > 0) {
    identities = widList.map(workloadIdentity);
    let defaultIdx = -1;
    identities.forEach((wid, i) => {
      canonicalizeIdentity(wid);
      if (wid["Name"] === "default") {
        identity = wid;
        defaultIdx = i;
      }
    });
    if (defaultIdx >= 0) identities.splice(defaultIdx, 1);
  }
  if (identity === null)
    identity = { Name: "default", Audience: ["nomadproject.io"], ChangeMode: "", ChangeSignal: "", Env: false, File: false, Filepath: "", ServiceName: "", TTL: 0 };
  else canonicalizeIdentity(identity);
  return { identity, identities };
}

/** A task of the group `groupName`, whose restart policy it starts from. */
export function buildTask(t: Obj, ctx: JobContext, groupName: string, groupRestart: Obj): Obj {
  const name = getStr(t, "Name");

  const resources = taskResources(t);

  // Restart policy: the group's, with the task's own fields merged over it.
  const taskRestart = getObj(t, "RestartPolicy");
  const restart = mergePresent(groupRestart, taskRestart);

  const vault = getObj(t, "Vault");
  const vaultOut = vault ? vaultBlock(vault, ctx) : null;
  const templates = getObjList(t, "Templates").map(template);
  const artifacts = getObjList(t, "Artifacts").map(artifact);

  const lifecycle = getObj(t, "Lifecycle");
  const volumeMounts = getObjList(t, "VolumeMounts")
    .filter((vm) => has(vm, "Volume"))
    .map((vm) => ({
      Volume: getStr(vm, "Volume"),
      Destination: getStr(vm, "Destination"),
      ReadOnly: getBool(vm, "ReadOnly"),
      PropagationMode: getStr(vm, "PropagationMode", "private"),
      SELinuxLabel: getStr(vm, "SELinuxLabel"),
    }));
  const csi = getObj(t, "CSIPluginConfig");
  const scalingPolicies = getObjList(t, "ScalingPolicies").map((p) => scalingPolicy(p, 0, ctx, groupName, name));
  const actions = getObjList(t, "Actions").map((a) => ({ Name: getStr(a, "Name"), Command: getStr(a, "Command"), Args: cloneStrings(a["Args"]) }));
  const { identity, identities } = taskIdentities(t);

  const killTimeout = getNum(t, "KillTimeout");
  const taskConsul = getObj(t, "Consul");
  const dispatch = getObj(t, "DispatchPayload");
  return {
    Name: name,
    Driver: getStr(t, "Driver"),
    User: getStr(t, "User"),
    Config: nonEmptyMap(t["Config"]),
    Env: nonEmptyMap(t["Env"]),
    Services: services(getList(t, "Services"), ctx, groupName, name),
    Vault: vaultOut,
    Consul: taskConsul ? consulBlock(taskConsul, null) : null,
    Templates: templates.length > 0 ? templates : null,
    Constraints: constraints(getList(t, "Constraints")),
    Affinities: affinities(getList(t, "Affinities")),
    Resources: resources,
    RestartPolicy: restart,
    DispatchPayload: dispatch ? { File: getStr(dispatch, "File") } : null,
    Lifecycle: lifecycle && getStr(lifecycle, "Hook") !== "" ? { Hook: getStr(lifecycle, "Hook"), Sidecar: getBool(lifecycle, "Sidecar") } : null,
    Meta: nonEmptyMap(t["Meta"]),
    KillTimeout: killTimeout === 0 ? 5 * SECOND : killTimeout,
    LogConfig: (() => {
      const lc = getObj(t, "LogConfig");
      return { MaxFiles: getNum(lc, "MaxFiles", 10), MaxFileSizeMB: getNum(lc, "MaxFileSizeMB", 10), Disabled: getBool(lc, "Disabled") };
    })(),
    Artifacts: artifacts.length > 0 ? artifacts : null,
    Leader: getBool(t, "Leader"),
    ShutdownDelay: getNum(t, "ShutdownDelay"),
    VolumeMounts: volumeMounts.length > 0 ? volumeMounts : null,
    ScalingPolicies: scalingPolicies.length > 0 ? scalingPolicies : null,
    KillSignal: getStr(t, "KillSignal"),
    Kind: getStr(t, "Kind"),
    CSIPluginConfig: csi
      ? {
          ID: getStr(csi, "ID"),
          Type: getStr(csi, "Type"),
          MountDir: getStr(csi, "MountDir") || "/csi",
          StagePublishBaseDir: getStr(csi, "StagePublishBaseDir") || "/local/csi",
          HealthTimeout: getNum(csi, "HealthTimeout") || 30 * SECOND,
        }
      : null,
    Identity: identity,
    Identities: identities,
    Actions: actions.length > 0 ? actions : null,
    Schedule: has(t, "Schedule") ? deepClone(t["Schedule"]) : null,
  };
}
