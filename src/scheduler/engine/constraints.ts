/**
 * Node feasibility by a job's and a group's constraints, as Nomad's
 * feasibility checkers test them against a node's attributes, meta and
 * fields (the operators clients use most; the rest do not restrict).
 */
import { compileGoRegexp } from "../../core/go/regexp.js";
import type { NodeRow, JobRow } from "../state/model.js";
import type { Group, Json } from "./core.js";

/** The constraint operators clients use most (`=`, `!=`, `regexp`, `set_contains`, `is_set`) on `${attr.*}`, `${meta.*}`, `${node.*}`. */
export function constraintsMet(job: JobRow, group: Group & { Constraints?: unknown }, node: NodeRow): boolean {
  const constraints = [...((job.Constraints as Json[] | null) ?? []), ...(((group as { Constraints?: Json[] | null }).Constraints as Json[] | null) ?? [])];
  return constraints.every((c) => {
    const left = resolveTarget(String(c.LTarget ?? ""), node);
    const right = resolveTarget(String(c.RTarget ?? ""), node);
    switch (String(c.Operand ?? "=")) {
      case "=":
      case "==":
      case "is":
        return left === right;
      case "!=":
      case "not":
        return left !== right;
      case "regexp":
        return left !== undefined && regexpMatches(right ?? "", left);
      case "set_contains":
        return (
          left !== undefined &&
          (right ?? "").split(",").every((v) =>
            left
              .split(",")
              .map((s) => s.trim())
              .includes(v.trim()),
          )
        );
      case "is_set":
        return left !== undefined;
      case "is_not_set":
        return left === undefined;
      default:
        return true; // operators not simulated (version, distinct_hosts, …) do not restrict placement
    }
  });
}

function resolveTarget(target: string, node: NodeRow): string | undefined {
  const match = /^\$\{(attr|meta|node)\.(.+)\}$/.exec(target);
  if (!match) return target;
  const [, kind, name] = match;
  if (kind === "attr") return node.Attributes[name!];
  if (kind === "meta") return node.Meta[name!];
  const fields: Record<string, string> = { unique_id: node.ID, unique_name: node.Name, datacenter: node.Datacenter, class: node.NodeClass, pool: node.NodePool };
  return fields[name!];
}

/**
 * Nomad's checkRegexpMatch: Go's regexp (RE2 syntax and semantics, so `(?i)`
 * works and look-arounds do not), unanchored; a pattern that does not compile
 * makes the node infeasible. Compiled patterns are kept (core/go/regexp).
 */
function regexpMatches(pattern: string, value: string): boolean {
  const compiled = compileGoRegexp(pattern);
  return compiled.re !== undefined && compiled.re.matcher(value).find();
}
