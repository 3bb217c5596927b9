/**
 * A task group as the server stores it: count, the update / reschedule /
 * migrate blocks merged from the job's with the job type's defaults, restart
 * policy, disconnect settings, volumes, and its tasks.
 */
import { isPlainObject, setOwn, type Obj } from "../objects.js";
import { cloneStrings, getBool, getList, getNum, getObj, getObjList, getStr, has, nonEmptyMap, optNum } from "./accessors.js";
import { affinities, constraints, consulBlock, networks, scalingPolicy, spreads } from "./blocks.js";
import type { JobContext } from "./context.js";
import { MIGRATE_DEFAULTS, mergePresent, rescheduleDefaults, restartDefaults, structsUpdate, UPDATE_DEFAULTS, updateIsEmpty, withDefaults } from "./defaults.js";
import { services } from "./services.js";
import { buildTask } from "./task.js";

export function buildGroup(tg: Obj, ctx: JobContext): Obj {
  const name = getStr(tg, "Name");
  const scaling = getObj(tg, "Scaling");
  const apiCount = has(tg, "Count") ? getNum(tg, "Count") : scaling && has(scaling, "Min") ? getNum(scaling, "Min") : 1;
  const count = ctx.type === "system" && apiCount === 0 ? 1 : apiCount;

  // Update: the job's (already canonicalized) merged with the group's.
  const own = getObj(tg, "Update");
  let update: Obj | undefined;
  if (ctx.update && own) update = mergePresent(ctx.update, own);
  else if (ctx.update && !updateIsEmpty(ctx.update)) update = { ...ctx.update };
  else update = own;
  const updateOut = update ? structsUpdate(withDefaults(update, UPDATE_DEFAULTS)) : null;

  // Reschedule: job ⊕ group, then the job type's defaults (none for system jobs).
  const ownReschedule = getObj(tg, "ReschedulePolicy");
  let reschedule: Obj | undefined;
  if (ctx.reschedule && ownReschedule) reschedule = mergePresent(ctx.reschedule, ownReschedule);
  else reschedule = ctx.reschedule ? { ...ctx.reschedule } : ownReschedule;
  if (!reschedule && ctx.type !== "system") reschedule = {};
  const rescheduleOut = reschedule ? withDefaults(reschedule, rescheduleDefaults(ctx.type)) : null;

  // Migrate: job ⊕ group; service jobs always get one.
  const ownMigrate = getObj(tg, "Migrate");
  let migrate: Obj | undefined;
  if (ctx.migrate && ownMigrate) migrate = mergePresent(ctx.migrate, ownMigrate);
  else migrate = ctx.migrate ? { ...ctx.migrate } : ownMigrate;
  if (!migrate && ctx.type === "service") migrate = {};
  const migrateOut = migrate ? withDefaults(migrate, MIGRATE_DEFAULTS) : null;

  const restart = mergePresent(restartDefaults(ctx.type), getObj(tg, "RestartPolicy"));

  const disk = getObj(tg, "EphemeralDisk");
  const maxClientDisconnect = optNum(tg, "MaxClientDisconnect");
  const stopAfterClientDisconnect = optNum(tg, "StopAfterClientDisconnect");
  const disconnect = getObj(tg, "Disconnect");
  let disconnectOut: Obj | null = null;
  if (disconnect) {
    let lostAfter = getNum(disconnect, "LostAfter");
    if (maxClientDisconnect !== null && lostAfter === 0) lostAfter = maxClientDisconnect;
    const stopOnClientAfter = has(disconnect, "StopOnClientAfter") ? getNum(disconnect, "StopOnClientAfter") : stopAfterClientDisconnect;
    disconnectOut = {
      LostAfter: lostAfter,
      StopOnClientAfter: stopOnClientAfter,
      Replace: getBool(disconnect, "Replace", true),
      Reconcile: getStr(disconnect, "Reconcile") || "best_score",
    };
  }

  const volumes = getObj(tg, "Volumes");
  let volumesOut: Obj | null = null;
  if (volumes && Object.keys(volumes).length > 0) {
    volumesOut = {};
    for (const [key, value] of Object.entries(volumes)) {
      const v = isPlainObject(value) ? value : {};
      const type = getStr(v, "Type");
      if (type !== "host" && type !== "csi") continue; // ApiTgToStructsTG ignores other types
      const mount = getObj(v, "MountOptions");
      setOwn(volumesOut, key, {
        Name: getStr(v, "Name"),
        Type: type,
        Source: getStr(v, "Source"),
        ReadOnly: getBool(v, "ReadOnly"),
        AccessMode: getStr(v, "AccessMode"),
        AttachmentMode: getStr(v, "AttachmentMode"),
        MountOptions: mount ? { FSType: getStr(mount, "FSType"), MountFlags: cloneStrings(mount["MountFlags"]) } : null,
        PerAlloc: getBool(v, "PerAlloc"),
      });
    }
  }

  const tasks = getObjList(tg, "Tasks");
  return {
    Name: name,
    Count: count,
    Update: updateOut,
    Migrate: migrateOut,
    Constraints: constraints(getList(tg, "Constraints")),
    Scaling: scaling ? scalingPolicy(scaling, apiCount, ctx, name, null) : null,
    RestartPolicy: restart,
    Disconnect: disconnectOut,
    Tasks: tasks.length > 0 ? tasks.map((t) => buildTask(t, ctx, name, restart)) : null,
    EphemeralDisk: { Sticky: getBool(disk, "Sticky"), SizeMB: getNum(disk, "SizeMB", 300), Migrate: getBool(disk, "Migrate") },
    Meta: nonEmptyMap(tg["Meta"]),
    ReschedulePolicy: rescheduleOut,
    Affinities: affinities(getList(tg, "Affinities")),
    Spreads: spreads(getList(tg, "Spreads")),
    Networks: networks(getList(tg, "Networks")),
    Consul: consulBlock(getObj(tg, "Consul"), ctx.consulNamespace),
    Services: services(getList(tg, "Services"), ctx, name, null),
    Volumes: volumesOut,
    ShutdownDelay: optNum(tg, "ShutdownDelay"),
    StopAfterClientDisconnect: stopAfterClientDisconnect,
    MaxClientDisconnect: maxClientDisconnect,
    PreventRescheduleOnLost: getBool(tg, "PreventRescheduleOnLost"),
  };
}
