/**
 * The scheduler's layout (docs/development.md, Layout): its top level is its
 * face and every other concern lives in a room (a folder). These tests read
 * the import statements, so a loose file at the top, a room reaching up into
 * the face, or two rooms importing each other fails here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SCHEDULER = join(import.meta.dirname, "../../src/scheduler");

/** What stays at the top: the service, one region composed, its routes' catalog, its control actions. */
const FACE = ["actions.ts", "cluster.ts", "index.ts", "route-catalog.ts"];

/** Every .ts file under dir, as paths relative to the scheduler's folder. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [relative(SCHEDULER, path)] : [];
  });
}

/** The scheduler files a source file imports (or re-exports), relative to the scheduler's folder. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(SCHEDULER, file), "utf8");
  const found = [...text.matchAll(/^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)\.js";/gms)].map((m) => resolve(SCHEDULER, dirname(file), `${m[1]}.ts`));
  return found.map((path) => relative(SCHEDULER, path)).filter((path) => !path.startsWith(".."));
}

/** The room a file stands in (its first folder), or undefined for a file of the face. */
const roomOf = (file: string): string | undefined => (file.includes(sep) ? file.split(sep)[0] : undefined);

const files = sourceFiles(SCHEDULER);

describe("the scheduler's rooms", () => {
  it("reads imports as written (nested rooms and the face too)", () => {
    expect(importsOf("cluster.ts")).toEqual(expect.arrayContaining(["engine/index.ts", "state/model.ts", "events/events.ts"]));
    expect(importsOf("events/events.ts")).toEqual(expect.arrayContaining(["state/model.ts", "events/stream-event.ts", "acl/acl.ts"]));
    expect(importsOf("jobspec/admit.ts")).toContain("jobspec/periodic.ts");
  });

  it("keeps only the face at the top level", () => {
    expect(files.filter((f) => roomOf(f) === undefined).sort()).toEqual(FACE);
  });

  it("has no room import the service or the region that compose it", () => {
    const upward = files
      .filter((f) => roomOf(f) !== undefined)
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => ["index.ts", "cluster.ts", "actions.ts"].includes(t))
          .map((t) => `${f} -> ${t}`),
      );
    expect(upward).toEqual([]);
  });

  it("has no circle of rooms", () => {
    const rooms = new Map<string, Set<string>>();
    for (const file of files) {
      const from = roomOf(file);
      if (from === undefined) continue;
      const targets = rooms.get(from) ?? new Set<string>();
      for (const target of importsOf(file)) {
        const to = roomOf(target);
        if (to !== undefined && to !== from) targets.add(to);
      }
      rooms.set(from, targets);
    }
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const visit = (room: string, path: string[]) => {
      if (state.get(room) === "done") return;
      if (state.get(room) === "open") {
        circles.push([...path.slice(path.indexOf(room)), room].join(" -> "));
        return;
      }
      state.set(room, "open");
      for (const target of rooms.get(room) ?? []) visit(target, [...path, room]);
      state.set(room, "done");
    };
    for (const room of rooms.keys()) visit(room, []);
    expect(circles).toEqual([]);
  });

  it("keeps state/ on the ground: the tables import no other room", () => {
    const up = files
      .filter((f) => roomOf(f) === "state")
      .flatMap((f) =>
        importsOf(f)
          .filter((t) => roomOf(t) !== "state")
          .map((t) => `${f} -> ${t}`),
      );
    expect(up).toEqual([]);
  });
});
