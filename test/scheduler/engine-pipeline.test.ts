/**
 * The scheduler engine's shape (engine/index.ts): a pipeline of steps in the
 * order Nomad's server runs them, where a step imports only the steps after
 * it and the shared pieces below them all; going back up is a follow-up
 * through the engine core, never an import. These tests read the engine's
 * import statements, so a new file must be given its step here, and an
 * import that runs back up (which would make the steps a web again) fails.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ENGINE = join(import.meta.dirname, "../../src/scheduler/engine");
const SCHEDULER = join(ENGINE, "..");

/** Read by every step; imports only other shared pieces. */
const SHARED = "shared";
/** The garbage collector on the clock: beside the pipeline, reads only shared pieces. */
const BESIDE = "beside";
/** The public face: may import every step; nothing imports it. */
const FACE = "face";

const STEP: Record<string, number | typeof SHARED | typeof BESIDE | typeof FACE> = {
  "index.ts": FACE,
  // 1 admission, and the front doors that register a job
  "register.ts": 1,
  "revert.ts": 1,
  "dispatch.ts": 1,
  "scaling.ts": 1,
  "periodic-launches.ts": 1,
  "periodic-schedule.ts": 1,
  "versions.ts": 1,
  // 2 the evaluation broker
  "evaluations.ts": 2,
  "broker.ts": 2,
  "eval-delete.ts": 2,
  // 3 the reconciler
  "reconcile.ts": 3,
  "reschedule-reconcile.ts": 3,
  "plan.ts": 3,
  // 4 placement (5, plan apply, is placement's placeAlloc and allocations' stopAllocByPlan)
  "placement.ts": 4,
  "constraints.ts": 4,
  // 6 client updates
  "allocations.ts": 6,
  "faults.ts": 6,
  "task-restarts.ts": 6,
  // 7 the deployment watcher
  "deployment-health.ts": 7,
  "deployment-watcher.ts": 7,
  "deployments.ts": 7,
  "core.ts": SHARED,
  "constants.ts": SHARED,
  "errors.ts": SHARED,
  "job-kinds.ts": SHARED,
  "summaries.ts": SHARED,
  "rescheduling.ts": SHARED,
  "group-spec.ts": SHARED,
  "gc-settings.ts": SHARED,
  "gc.ts": BESIDE,
  "gc-rules.ts": BESIDE,
  "gc-force.ts": BESIDE,
};

/** The relative imports (and re-exports) of a source file, as file names in its folder or above. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const found = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)\.js";/gms)].map((m) => `${m[1]}.ts`);
  return found.map((p) => (p.startsWith("./") ? p.slice(2) : p));
}

const files = readdirSync(ENGINE).filter((f) => f.endsWith(".ts"));
const graph = new Map(files.map((f) => [f, importsOf(join(ENGINE, f)).filter((p) => !p.startsWith("../"))]));

describe("the scheduler engine as a pipeline", () => {
  it("reads imports as written (one per step file at least, multi-line ones too)", () => {
    expect(graph.get("index.ts")).toEqual(expect.arrayContaining(["register.ts", "evaluations.ts", "plan.ts", "deployments.ts", "core.ts"]));
    expect(graph.get("register.ts")).toEqual(expect.arrayContaining(["evaluations.ts", "core.ts"]));
    expect(graph.get("reconcile.ts")).toEqual(expect.arrayContaining(["placement.ts", "allocations.ts", "deployments.ts"]));
  });

  it("gives every engine file its step", () => {
    expect(files.filter((f) => !(f in STEP))).toEqual([]);
  });

  it("has no step import a step before it, and the shared pieces import no step", () => {
    const backwards: string[] = [];
    for (const [file, imports] of graph) {
      const from = STEP[file]!;
      for (const target of imports) {
        const to = STEP[target];
        if (to === undefined) continue;
        const allowed = from === FACE || to === SHARED || (from === BESIDE && to === BESIDE) || (typeof from === "number" && typeof to === "number" && to >= from);
        if (to === FACE || !allowed) backwards.push(`${file} (${from}) -> ${target} (${to})`);
      }
    }
    expect(backwards).toEqual([]);
  });

  it("has no circle of imports, within a step either", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        circles.push([...path.slice(path.indexOf(file)), file].join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const target of graph.get(file) ?? []) visit(target, [...path, file]);
      state.set(file, "done");
    };
    for (const file of files) visit(file, []);
    expect(circles).toEqual([]);
  });

  it("keeps the engine core free of the steps, and the held-ports index free of the model", () => {
    expect(graph.get("core.ts")!.filter((t) => STEP[t] !== SHARED)).toEqual([]);
    expect(importsOf(join(SCHEDULER, "state/held-ports.ts"))).not.toContain("model.ts");
    expect(importsOf(join(SCHEDULER, "state/model.ts"))).toContain("held-ports.ts");
  });
});
