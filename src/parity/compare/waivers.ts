/**
 * Waivers: the differences a team knows of and accepts (`--waive
 * waivers.json`), each a route, a path pattern and a reason:
 *
 *   [{ "route": "GET /v1/job/:id", "path": "$.Meta", "reason": "…" }]
 *
 * `route` is a route as the report names it (`GET /v1/job/:id`, optionally
 * with the service first: `scheduler GET /v1/job/:id`). `path` is where in
 * the answer, as the report writes it (`$.Allocations[3].ModifyTime`,
 * `status`, `headers.x-nomad-index`, `route`), where `[*]` is any list
 * index, `*` any one key and `**` anything. Both may use the globs.
 */
import * as v from "valibot";
import { describeIssues } from "../../core/validation.js";

export interface Waiver {
  readonly route: string;
  readonly path: string;
  readonly reason: string;
}

export class WaiverError extends Error {}

const waiversShape = v.array(v.strictObject({ route: v.pipe(v.string(), v.minLength(1)), path: v.pipe(v.string(), v.minLength(1)), reason: v.string() }));

export function parseWaivers(document: unknown): Waiver[] {
  const parsed = v.safeParse(waiversShape, document);
  if (!parsed.success) throw new WaiverError(`not a waiver list ([{route, path, reason}]): ${describeIssues(parsed.issues).slice(0, 3).join("; ")}`);
  return parsed.output;
}

/** Matches differences (by service, route label and path) against the waivers. */
export class WaiverMatcher {
  private readonly compiled: Array<{ waiver: Waiver; route: RegExp; path: RegExp }>;

  constructor(waivers: readonly Waiver[]) {
    this.compiled = waivers.map((waiver) => ({ waiver, route: globRegex(waiver.route, " "), path: globRegex(waiver.path, ".[") }));
  }

  /** The waiver that covers a difference, if any. */
  find(service: string, route: string, at: string): Waiver | undefined {
    return this.compiled.find((c) => (c.route.test(route) || c.route.test(`${service} ${route}`)) && c.path.test(at))?.waiver;
  }
}

/** A glob: `**` anything, `[*]` any list index, `*` anything but the separators. */
export function globRegex(pattern: string, separators: string): RegExp {
  const notSeparator = `[^${separators.replace(/[\]\\^-]/g, "\\$&")}]*`;
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    if (pattern.startsWith("**", i)) {
      out += ".*";
      i++;
    } else if (pattern.startsWith("[*]", i)) {
      out += "\\[\\d+\\]";
      i += 2;
    } else if (pattern[i] === "*") out += notSeparator;
    else out += pattern[i]!.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${out}$`);
}
