/**
 * `GET /v1/client/allocation/:id/stats`: the client's AllocResourceUsage
 * (client/structs ResourceUsage, MemoryStats, CpuStats;
 * allocRunner.LatestAllocStats). No process runs here, so each running
 * task reports a fixed share of what it reserved: memory (RSS 40 % of
 * memory MB, cache 1/16, max usage another 1/8 above usage) and CPU (5 % of
 * its MHz, as a percentage of a 2 GHz core). The same allocation at the same
 * virtual instant always reports the same numbers; the timestamps are the
 * virtual clock's.
 */
import type { AllocRow, JobRow } from "../state/model.js";
import type { TaskStatesRow } from "../state/task-states.js";

const MIB = 1024 * 1024;
/** The core the CPU percentage is relative to (the emulated nodes do not fingerprint one). */
const CORE_MHZ = 2000;
/** What the docker driver on cgroups v1 reports as sampled. */
const MEMORY_MEASURED = ["RSS", "Cache", "Swap", "Usage", "Max Usage"];
const CPU_MEASURED = ["Throttled Periods", "Throttled Time", "Percent"];

interface MemoryStats {
  RSS: number;
  Cache: number;
  Swap: number;
  MappedFile: number;
  Usage: number;
  MaxUsage: number;
  KernelUsage: number;
  KernelMaxUsage: number;
  Measured: string[] | null;
}
interface CpuStats {
  SystemMode: number;
  UserMode: number;
  TotalTicks: number;
  ThrottledPeriods: number;
  ThrottledTime: number;
  Percent: number;
  Measured: string[] | null;
}
interface ResourceUsage {
  MemoryStats: MemoryStats;
  CpuStats: CpuStats;
  DeviceStats: unknown[] | null;
}

type TaskResources = { CPU?: number; MemoryMB?: number } | null | undefined;

/** One running task's usage, from its reservation (Nomad's defaults: 100 MHz, 300 MB). */
function taskUsage(resources: TaskResources): ResourceUsage {
  const memory = Number(resources?.MemoryMB ?? 300) * MIB;
  const rss = Math.floor((memory * 2) / 5);
  const cache = Math.floor(memory / 16);
  const ticks = Number(resources?.CPU ?? 100) / 20;
  const percent = (ticks / CORE_MHZ) * 100;
  return {
    MemoryStats: {
      RSS: rss,
      Cache: cache,
      Swap: 0,
      MappedFile: 0,
      Usage: rss + cache,
      MaxUsage: rss + cache + Math.floor(memory / 8),
      KernelUsage: 0,
      KernelMaxUsage: 0,
      Measured: [...MEMORY_MEASURED],
    },
    CpuStats: { SystemMode: percent / 4, UserMode: (percent * 3) / 4, TotalTicks: ticks, ThrottledPeriods: 0, ThrottledTime: 0, Percent: percent, Measured: [...CPU_MEASURED] },
    DeviceStats: null,
  };
}

/** client/structs joinStringSet: s1, then what s2 adds, in order. */
function joinStringSet(a: string[] | null, b: string[] | null): string[] {
  const out = [...(a ?? [])];
  for (const s of b ?? []) if (!out.includes(s)) out.push(s);
  return out;
}

function add(sum: ResourceUsage, usage: ResourceUsage): void {
  const m = sum.MemoryStats;
  const o = usage.MemoryStats;
  m.RSS += o.RSS;
  m.Cache += o.Cache;
  m.Swap += o.Swap;
  m.MappedFile += o.MappedFile;
  m.Usage += o.Usage;
  m.MaxUsage += o.MaxUsage;
  m.KernelUsage += o.KernelUsage;
  m.KernelMaxUsage += o.KernelMaxUsage;
  m.Measured = joinStringSet(m.Measured, o.Measured);
  const c = sum.CpuStats;
  const p = usage.CpuStats;
  c.SystemMode += p.SystemMode;
  c.UserMode += p.UserMode;
  c.TotalTicks += p.TotalTicks;
  c.ThrottledPeriods += p.ThrottledPeriods;
  c.ThrottledTime += p.ThrottledTime;
  c.Percent += p.Percent;
  c.Measured = joinStringSet(c.Measured, p.Measured);
  sum.DeviceStats = [...(sum.DeviceStats ?? []), ...(usage.DeviceStats ?? [])];
}

/** LatestAllocStats(taskFilter): the running tasks' usage (only `task`'s when given, none for an unknown name) and their sum. */
export function allocResourceUsage(alloc: AllocRow & { TaskStates: TaskStatesRow }, job: JobRow | undefined, taskFilter: string, nowMs: number) {
  const group = (job?.TaskGroups as unknown as Array<{ Name: string; Tasks?: Array<{ Name: string; Resources?: TaskResources }> }> | undefined)?.find(
    (g) => g.Name === alloc.TaskGroup,
  );
  const total: ResourceUsage = {
    MemoryStats: { RSS: 0, Cache: 0, Swap: 0, MappedFile: 0, Usage: 0, MaxUsage: 0, KernelUsage: 0, KernelMaxUsage: 0, Measured: null },
    CpuStats: { SystemMode: 0, UserMode: 0, TotalTicks: 0, ThrottledPeriods: 0, ThrottledTime: 0, Percent: 0, Measured: null },
    DeviceStats: [],
  };
  const tasks: Record<string, { ResourceUsage: ResourceUsage; Timestamp: bigint; Pids: null }> = {};
  const timestamp = BigInt(nowMs) * 1_000_000n;
  let latest = 0n;
  for (const [name, state] of Object.entries(alloc.TaskStates)) {
    if (taskFilter !== "" && taskFilter !== name) continue;
    // A task without a driver handle has no usage to report.
    if (state.State !== "running") continue;
    const usage = taskUsage(group?.Tasks?.find((t) => t.Name === name)?.Resources);
    tasks[name] = { ResourceUsage: usage, Timestamp: timestamp, Pids: null };
    add(total, usage);
    latest = timestamp;
  }
  return { ResourceUsage: total, Tasks: tasks, Timestamp: latest };
}
