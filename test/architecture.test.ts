/**
 * The house rules of src/ that an import can break, read from the source
 * itself: no import circles, nothing below importing what stands above it (the
 * emulator → the control API → the dashboard → the composition in
 * emulator.ts), and no source file over 800 lines.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** Relative imports and re-exports (type-only ones too: they tie files as much), as paths under the repository. */
function importsOf(file: string, text: string): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/gms),
    ...text.matchAll(/^\s*import\s+"(\.[^"]+)"/gm),
    ...text.matchAll(/\bimport\(\s*"(\.[^"]+)"\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers.map((s) => relative(ROOT, resolve(dirname(file), s.replace(/\.js$/, ".ts"))));
}

const files = sourceFiles(SRC).map((path) => ({ name: relative(ROOT, path), text: readFileSync(path, "utf8") }));
const graph = new Map(files.map((f) => [f.name, importsOf(join(ROOT, f.name), f.text).filter((target) => target.startsWith("src/"))]));

/** Groups of files that import each other, directly or around a circle (Tarjan's strongly connected components, more than one file). */
function circles(): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    for (let member = stack.pop()!; ; member = stack.pop()!) {
      onStack.delete(member);
      group.push(member);
      if (member === node) break;
    }
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The imports of the files under `from` that reach a file under any of `above`. */
function importsUp(from: string, above: readonly string[]): string[] {
  return [...graph.entries()]
    .filter(([file]) => file.startsWith(from))
    .flatMap(([file, targets]) => targets.filter((t) => above.some((a) => t.startsWith(a))).map((t) => `${file} -> ${t}`));
}

describe("the import graph of src/", () => {
  it("reads the imports it checks (a reader that saw none would pass everything)", () => {
    expect(graph.get("src/emulator.ts")).toEqual(expect.arrayContaining(["src/standin/with-control.ts", "src/ui/dashboard.ts"]));
    expect(graph.get("src/core/hcl/parser.ts")).toContain("src/core/hcl/parse/bodies.ts");
  });

  it("has no import circle", () => {
    expect(circles()).toEqual([]);
  });

  it("has nothing below importing what stands above it: emulator, control API, replay and parity, dashboard, composition", () => {
    const composition = ["src/emulator.ts", "src/server.ts", "src/cli", "src/index.ts", "src/testing/"];
    expect(importsUp("src/standin/", ["src/ui/", "src/replay.ts", ...composition])).toEqual([]);
    // The emulator builds on the recorder, the scenario engine and idle skipping, never on the API's routes (with-control.ts attaches them).
    expect(importsUp("src/standin/standin.ts", ["src/control/index.ts", "src/control/routes/"])).toEqual([]);
    expect(importsUp("src/control/", ["src/standin/", "src/ui/", "src/replay", ...composition])).toEqual([]);
    expect(importsUp("src/replay", ["src/ui/", ...composition])).toEqual([]);
    expect(importsUp("src/ui/", composition)).toEqual([]);
    // Parity replays on a scratch emulator as replay.ts does; the dashboard reads its reports, so it stands below the dashboard.
    expect(importsUp("src/parity/", ["src/ui/", ...composition])).toEqual([]);
    expect(importsUp("src/scenario-files/", ["src/scheduler/", "src/registry/", "src/echo/", "src/standin/", "src/control/", ...composition])).toEqual([]);
  });

  it("has no source file over 800 lines", () => {
    const long = files.filter((f) => f.text.split("\n").length > 800).map((f) => f.name);
    expect(long).toEqual([]);
  });
});
