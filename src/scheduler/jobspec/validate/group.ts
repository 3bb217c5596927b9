/**
 * structs.TaskGroup.Validate, in Nomad's order: name, count and tasks,
 * disconnect settings, placement, restart / reschedule / ephemeral disk /
 * update / migrate, task names and leaders, networks, services, scaling,
 * then each task.
 */
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { validateGroupNetworks } from "./networks.js";
import { validatePlacement } from "./placement.js";
import { validateDisconnect, validateMigrate, validateRestart, validateUpdate } from "./policies.js";
import { block, flag, isSet, items, nested, num, str } from "./read.js";
import { validateReschedule } from "./reschedule.js";
import { validateGroupServices } from "./services.js";
import { validateTask } from "./task.js";

export function validateGroup(tg: Obj, job: Obj): string[] {
  const jobType = str(job, "Type");
  const errs: string[] = [];
  const name = str(tg, "Name");
  if (name === "") errs.push("Missing task group name");
  else if (name.includes("\0")) errs.push("Task group name contains null character");
  const count = num(tg, "Count");
  if (count < 0) errs.push("Task group count can't be negative");
  if (items(tg, "Tasks").length === 0) errs.push("Missing tasks for task group");
  const maxClientDisconnect = isSet(tg, "MaxClientDisconnect");
  const stopAfterClientDisconnect = isSet(tg, "StopAfterClientDisconnect");
  if (maxClientDisconnect && stopAfterClientDisconnect) {
    errs.push("Task group cannot be configured with both max_client_disconnect and stop_after_client_disconnect");
  }
  if (maxClientDisconnect && num(tg, "MaxClientDisconnect") < 0) errs.push("max_client_disconnect cannot be negative");
  const disconnect = block(tg, "Disconnect");
  if (disconnect) {
    // These three end the group's validation early, as in Nomad.
    if (maxClientDisconnect && num(disconnect, "LostAfter") > 0) return [...errs, "using both lost_after and max_client_disconnect is not allowed"];
    if (stopAfterClientDisconnect && isSet(disconnect, "StopOnClientAfter")) {
      return [...errs, "using both stop_after_client_disconnect and stop_on_client_after is not allowed"];
    }
    if (flag(tg, "PreventRescheduleOnLost") && isSet(disconnect, "Replace")) {
      return [...errs, "using both prevent_reschedule_on_lost and replace is not allowed"];
    }
    errs.push(...validateDisconnect(disconnect, jobType));
  }

  validatePlacement(tg, jobType, errs, "Constraints");
  validatePlacement(tg, jobType, errs, "Affinities");

  const restart = block(tg, "RestartPolicy");
  if (restart) errs.push(...validateRestart(restart));
  else errs.push(`Task Group ${name} should have a restart policy`);

  validatePlacement(tg, jobType, errs, "Spreads");

  const reschedule = block(tg, "ReschedulePolicy");
  if (jobType === "system") {
    if (reschedule) errs.push("System jobs should not have a reschedule policy");
  } else if (reschedule) errs.push(...validateReschedule(reschedule));
  else errs.push(`Task Group ${name} should have a reschedule policy`);

  const disk = block(tg, "EphemeralDisk");
  if (disk) {
    if (num(disk, "SizeMB") < 10) errs.push(`minimum DiskMB value is 10; got ${num(disk, "SizeMB")}`);
  } else errs.push(`Task Group ${name} should have an ephemeral disk object`);

  const update = block(tg, "Update");
  if (update) {
    if (jobType !== "service" && jobType !== "system") errs.push(`Job type ${goQuote(jobType)} does not allow update block`);
    errs.push(...validateUpdate(update));
  }

  const migrate = block(tg, "Migrate");
  if (jobType === "service") {
    if (migrate) errs.push(...validateMigrate(migrate));
  } else if (migrate) errs.push(`Job type ${goQuote(jobType)} does not allow migrate block`);

  const taskIndex = new Map<string, number>();
  let leaders = 0;
  items(tg, "Tasks").forEach((task, i) => {
    const taskName = str(task, "Name");
    if (taskName === "") errs.push(`Task ${i + 1} missing name`);
    else if (taskIndex.has(taskName)) errs.push(`Task ${i + 1} redefines '${taskName}' from task ${(taskIndex.get(taskName) ?? 0) + 1}`);
    else taskIndex.set(taskName, i);
    if (flag(task, "Leader")) leaders++;
  });
  if (leaders > 1) errs.push("Only one task may be marked as leader");

  const networkErrs = validateGroupNetworks(tg);
  if (networkErrs.length > 0) errs.push(`Task group network validation failed: ${nested(networkErrs)}`);
  const serviceErrs = validateGroupServices(tg);
  if (serviceErrs.length > 0) errs.push(`Task group service validation failed: ${nested(serviceErrs)}`);

  const scriptErrs: string[] = [];
  for (const svc of items(tg, "Services")) {
    if (str(svc, "TaskName") !== "") continue;
    for (const check of items(svc, "Checks")) {
      if (str(check, "Type") === "script" && str(check, "TaskName") === "") {
        scriptErrs.push(`Service [${name}]->${str(svc, "Name")} or Check ${str(check, "Name")} must specify task parameter`);
      }
    }
  }
  if (scriptErrs.length > 0) errs.push(`Task group service check validation failed: ${nested(scriptErrs)}`);

  const scaling = block(tg, "Scaling");
  if (scaling) {
    const inner: string[] = [];
    const min = num(scaling, "Min");
    const max = num(scaling, "Max");
    if (str(scaling, "Type") === "") inner.push("Scaling policy invalid: missing scaling policy type");
    if (max < 0) inner.push("Scaling policy invalid: maximum count must be specified and non-negative");
    else if (max < min) inner.push("Scaling policy invalid: maximum count must not be less than minimum count");
    if (min < 0) inner.push("Scaling policy invalid: minimum count must be specified and non-negative");
    if (max < count) inner.push("Scaling policy invalid: task group count must not be greater than maximum count in scaling policy");
    if (count < min) inner.push("Scaling policy invalid: task group count must not be less than minimum count in scaling policy");
    if (inner.length > 0) errs.push(`Task group scaling policy validation failed: ${nested(inner)}`);
  }

  for (const task of items(tg, "Tasks")) {
    const inner = validateTask(task, tg, jobType);
    if (inner.length > 0) errs.push(`Task ${str(task, "Name")} validation failed: ${nested(inner)}`);
  }
  return errs;
}
