/**
 * structs.Task.Validate: name and driver, kill timeout, resources, log
 * config, constraints and affinities, services, artifacts, Vault, templates
 * (only their basic shape), actions, dispatch payload, lifecycle, volume
 * mounts and workload identities.
 */
import { pathJoin } from "../go.js";
import { goQuote } from "../../../core/go/strconv.js";
import { isPlainObject, type Obj } from "../objects.js";
import { validateConstraint, validatePlacement } from "./placement.js";
import { block, dur, items, nested, num, str } from "./read.js";
import { validateTaskServices } from "./services.js";

/** escapingfs.PathEscapesAllocViaRelative: does prefix/path leave the allocation directory? */
function escapesAllocDir(prefix: string, path: string): boolean {
  const allocDir = "/alloc-dir/alloc-id";
  const joined = pathJoin(allocDir, prefix, path);
  return !(joined === allocDir || joined.startsWith(`${allocDir}/`));
}

const IDENTITY_NAME = /^[a-zA-Z0-9-_]{1,128}$/;

function validateIdentity(wid: Obj): string[] {
  const errs: string[] = [];
  const name = str(wid, "Name");
  if (!IDENTITY_NAME.test(name)) errs.push(`invalid name ${goQuote(name)}. Must match regex ^[a-zA-Z0-9-_]{1,128}$`);
  const audience = isPlainObject(wid) && Array.isArray(wid["Audience"]) ? (wid["Audience"] as unknown[]) : [];
  audience.forEach((aud, i) => {
    if (aud === "") errs.push(`an empty string is an invalid audience (${i + 1})`);
  });
  const changeMode = str(wid, "ChangeMode");
  const changeSignal = str(wid, "ChangeSignal");
  if (changeMode === "" || changeMode === "noop" || changeMode === "restart") {
    if (changeSignal !== "") errs.push(`can only use change_signal=${goQuote(changeSignal)} with change_mode="signal"`);
  } else if (changeMode === "signal") {
    if (changeSignal === "") errs.push(`change_signal must be specified when using change_mode="signal"`);
  } else {
    errs.push(`invalid change_mode: ${changeMode}`);
  }
  const ttl = num(wid, "TTL");
  if (ttl > 0 && (name === "" || name === "default")) errs.push("ttl for default identity not yet supported");
  if (ttl < 0) errs.push("ttl must be >= 0");
  if (str(wid, "Filepath") !== "" && !(isPlainObject(wid) && wid["File"] === true)) errs.push("file parameter must be true in order to specify filepath");
  return errs;
}

function validateArtifact(a: Obj): string[] {
  const errs: string[] = [];
  if (str(a, "GetterSource") === "") errs.push("source must be specified");
  const mode = str(a, "GetterMode");
  if (!["", "any", "file", "dir"].includes(mode)) errs.push(`invalid artifact mode ${goQuote(mode)}; must be one of: any, file, dir`);
  if (escapesAllocDir("task", str(a, "RelativeDest"))) errs.push("destination escapes allocation directory");
  const options = block(a, "GetterOptions");
  const checksum = options?.["checksum"];
  if (typeof checksum === "string" && !/\$\{[^}]*\}/.test(checksum)) {
    const check = checksum.trim();
    const parts = check.split(":");
    if (check === "") errs.push("checksum value cannot be empty");
    else if (parts.length !== 2) errs.push(`checksum must be given as "type:value"; got ${goQuote(check)}`);
    else {
      const [kind = "", value = ""] = parts;
      const lengths: Record<string, number> = { md5: 16, sha1: 20, sha256: 32, sha512: 64 };
      if (!/^([0-9a-fA-F]{2})*$/.test(value)) errs.push("invalid checksum: encoding/hex: invalid byte");
      else if (lengths[kind] === undefined) errs.push(`unsupported checksum type: ${kind}`);
      else if (value.length / 2 !== lengths[kind]) errs.push(`invalid ${kind} checksum: ${value}`);
    }
  }
  return errs;
}

/** structs.Resources.Validate for a task (its nested problems, unrendered). */
function resourceProblems(resources: Obj): string[] {
  const inner: string[] = [];
  const cpu = num(resources, "CPU");
  const cores = num(resources, "Cores");
  const memory = num(resources, "MemoryMB");
  const memoryMax = num(resources, "MemoryMaxMB");
  if (cores > 0 && cpu > 0) inner.push("Task can only ask for 'cpu' or 'cores' resource, not both.");
  const minimum: string[] = [];
  if (cpu < 1 && cores === 0) minimum.push(`minimum CPU value is 1; got ${cpu}`);
  if (memory < 10) minimum.push(`minimum MemoryMB value is 10; got ${memory}`);
  if (minimum.length > 0) inner.push(nested(minimum));
  if (num(resources, "DiskMB") > 0) inner.push("Task can't ask for disk resources, they have to be specified at the task group level.");
  const numa = block(resources, "NUMA");
  if (numa && !["none", "prefer", "require"].includes(str(numa, "Affinity"))) inner.push("numa affinity must be one of none, prefer, or require");
  if (memoryMax !== 0 && memoryMax !== -1 && memoryMax < memory) {
    inner.push(`MemoryMaxMB value (${memoryMax}) should be larger than MemoryMB value (${memory})`);
  }
  // The secrets directory is a tmpfs counted in the task's memory.
  const secrets = num(resources, "SecretsMB");
  if (secrets > memory) inner.push(`SecretsMB value (${secrets}) cannot be larger than MemoryMB value (${memory})`);
  if (secrets < 0) inner.push(`SecretsMB value (${secrets}) cannot be negative`);
  return inner;
}

/** structs.LogConfig.Validate, against the group's ephemeral disk. */
function logConfigProblems(logConfig: Obj, tg: Obj): string[] {
  const inner: string[] = [];
  const files = num(logConfig, "MaxFiles");
  const size = num(logConfig, "MaxFileSizeMB");
  if (files < 1) inner.push(`minimum number of files is 1; got ${files}`);
  if (size < 1) inner.push(`minimum file size is 1MB; got ${size}`);
  const disk = block(tg, "EphemeralDisk");
  if (disk && num(disk, "SizeMB") <= files * size) {
    inner.push(`log storage (${files * size} MB) must be less than requested disk capacity (${num(disk, "SizeMB")} MB)`);
  }
  return inner;
}

function vaultProblems(vault: Obj): string[] {
  const inner: string[] = [];
  for (const policy of isPlainObject(vault) && Array.isArray(vault["Policies"]) ? (vault["Policies"] as unknown[]) : []) {
    if (policy === "root") inner.push(`Can not specify "root" policy`);
  }
  const mode = str(vault, "ChangeMode");
  if (mode === "signal") {
    if (str(vault, "ChangeSignal") === "") inner.push(`Signal must be specified when using change mode "signal"`);
  } else if (mode !== "noop" && mode !== "restart") {
    inner.push(`Unknown change mode ${goQuote(mode)}`);
  }
  return inner;
}

/** Templates: only the basic shape is checked (unverified texts beyond these). */
function templateErrors(task: Obj): string[] {
  const errs: string[] = [];
  const destinations = new Map<string, number>();
  items(task, "Templates").forEach((tmpl, i) => {
    const inner: string[] = [];
    if (str(tmpl, "SourcePath") === "" && str(tmpl, "EmbeddedTmpl") === "") inner.push("Must specify a source path or have an embedded template");
    if (str(tmpl, "DestPath") === "") inner.push("Must specify a destination for the template");
    if (num(tmpl, "Splay") < 0) inner.push("Must specify positive splay value");
    if (inner.length > 0) errs.push(`Template ${i + 1} validation failed: ${nested(inner)}`);
    const dest = str(tmpl, "DestPath");
    const other = destinations.get(dest);
    if (other !== undefined) errs.push(`Template ${i + 1} has same destination as ${other}`);
    else destinations.set(dest, i + 1);
  });
  return errs;
}

export function validateTask(task: Obj, tg: Obj, jobType: string): string[] {
  const errs: string[] = [];
  const name = str(task, "Name");
  if (name === "") errs.push("Missing task name");
  if (/[/\\]/.test(name)) errs.push("Task name cannot include slashes");
  else if (name.includes("\0")) errs.push("Task name cannot include null characters");
  if (str(task, "Driver") === "") errs.push("Missing task driver");
  const killTimeout = num(task, "KillTimeout");
  if (killTimeout < 0) errs.push("KillTimeout must be a positive value");
  else {
    const update = block(tg, "Update");
    const progressDeadline = num(update, "ProgressDeadline");
    if (jobType === "service" && update && progressDeadline > 0 && killTimeout > progressDeadline) {
      errs.push(`KillTimout (${dur(killTimeout)}) longer than the group's ProgressDeadline (${dur(progressDeadline)})`);
    }
  }
  if (num(task, "ShutdownDelay") < 0) errs.push("ShutdownDelay must be a positive value");

  const resources = block(task, "Resources");
  if (!resources) errs.push("Missing task resources");
  else {
    const inner = resourceProblems(resources);
    if (inner.length > 0) errs.push(nested(inner));
  }

  const logConfig = block(task, "LogConfig");
  if (!logConfig) errs.push("Missing Log Config");
  else {
    const inner = logConfigProblems(logConfig, tg);
    if (inner.length > 0) errs.push(nested(inner));
  }

  items(task, "Constraints").forEach((c, i) => {
    const inner = validateConstraint(c);
    if (inner.length > 0) errs.push(`Constraint ${i + 1} validation failed: ${nested(inner)}`);
    const operand = str(c, "Operand");
    if (operand === "distinct_hosts" || operand === "distinct_property") errs.push(`Constraint ${i + 1} has disallowed Operand at task level: ${operand}`);
  });
  validatePlacement(task, jobType, errs, "Affinities");

  const serviceErrs = validateTaskServices(task, tg);
  if (serviceErrs.length > 0) errs.push(nested(serviceErrs));

  items(task, "Artifacts").forEach((a, i) => {
    const inner = validateArtifact(a);
    if (inner.length > 0) errs.push(`Artifact ${i + 1} validation failed: ${nested(inner)}`);
  });

  const vault = block(task, "Vault");
  if (vault) {
    const inner = vaultProblems(vault);
    if (inner.length > 0) errs.push(`Vault validation failed: ${nested(inner)}`);
  }

  errs.push(...templateErrors(task));

  const seenActions = new Map<string, boolean>();
  for (const action of items(task, "Actions")) {
    const actionName = str(action, "Name");
    const handled = seenActions.get(actionName);
    if (handled === false) {
      errs.push(`Action ${actionName} defined multiple times`);
      seenActions.set(actionName, true);
      continue;
    }
    if (handled === undefined) seenActions.set(actionName, false);
  }

  const dispatch = block(task, "DispatchPayload");
  if (dispatch && escapesAllocDir("task/local/", str(dispatch, "File"))) {
    errs.push("Dispatch Payload validation failed: destination escapes allocation directory");
  }

  const lifecycle = block(task, "Lifecycle");
  if (lifecycle) {
    const hook = str(lifecycle, "Hook");
    if (hook === "") errs.push("Lifecycle validation failed: no lifecycle hook provided");
    else if (!["prestart", "poststart", "poststop"].includes(hook)) errs.push(`Lifecycle validation failed: invalid hook: ${hook}`);
  }

  const volumes = block(tg, "Volumes") ?? {};
  items(task, "VolumeMounts").forEach((vm, i) => {
    const volume = str(vm, "Volume");
    if (!Object.hasOwn(volumes, volume)) errs.push(`Volume Mount (${i}) references undefined volume ${volume}`);
  });

  const identity = block(task, "Identity");
  if (identity) {
    const inner = validateIdentity(identity);
    if (inner.length > 0) errs.push(`Identity ${goQuote(str(identity, "Name"))} is invalid: ${nested(inner)}`);
  }
  for (const wid of items(task, "Identities")) {
    if (str(wid, "Name") === "default") errs.push("Duplicate default identities found");
    const inner = validateIdentity(wid);
    if (inner.length > 0) errs.push(`Identity ${goQuote(str(wid, "Name"))} is invalid: ${nested(inner)}`);
  }
  return errs;
}
