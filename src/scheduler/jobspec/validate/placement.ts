/**
 * Constraints, affinities and spreads (structs Constraint / Affinity /
 * Spread.Validate), at any level, with the system-job rules. Regexp, version
 * and semver targets are not parsed.
 */
import { goQuote } from "../../../core/go/strconv.js";
import type { Obj } from "../objects.js";
import { isSet, items, nested, num, str } from "./read.js";

export function validateConstraint(c: Obj): string[] {
  const errs: string[] = [];
  const operand = str(c, "Operand");
  if (operand === "") errs.push("Missing constraint operand");
  let requireLTarget = true;
  switch (operand) {
    case "distinct_hosts":
      requireLTarget = false;
      break;
    case "set_contains_all":
    case "set_contains_any":
    case "set_contains":
      if (str(c, "RTarget") === "") errs.push("Set contains constraint requires an RTarget");
      break;
    case "regexp":
    case "version":
    case "semver":
      break; // the target expressions are not parsed here
    case "distinct_property": {
      const target = str(c, "RTarget");
      if (target !== "") {
        if (!/^[0-9]+$/.test(target) || BigInt(target) > 2n ** 64n - 1n) {
          const reason = /^[0-9]+$/.test(target) ? "value out of range" : "invalid syntax";
          errs.push(`Failed to convert RTarget ${goQuote(target)} to uint64: strconv.ParseUint: parsing ${goQuote(target)}: ${reason}`);
        } else if (BigInt(target) < 1n) {
          errs.push(`Distinct Property must have an allowed count of 1 or greater: ${target} < 1`);
        }
      }
      break;
    }
    case "is_set":
    case "is_not_set":
      if (str(c, "RTarget") !== "") errs.push(`Operator ${goQuote(operand)} does not support an RTarget`);
      break;
    case "=":
    case "==":
    case "is":
    case "!=":
    case "not":
    case "<":
    case "<=":
    case ">":
    case ">=":
      if (str(c, "RTarget") === "") errs.push(`Operator ${goQuote(operand)} requires an RTarget`);
      break;
    default:
      errs.push(`Unknown constraint type ${goQuote(operand)}`);
  }
  if (requireLTarget && str(c, "LTarget") === "") errs.push("No LTarget provided but is required by constraint");
  return errs;
}

function validateAffinity(a: Obj): string[] {
  const errs: string[] = [];
  const operand = str(a, "Operand");
  if (operand === "") errs.push("Missing affinity operand");
  switch (operand) {
    case "set_contains_all":
    case "set_contains_any":
    case "set_contains":
      if (str(a, "RTarget") === "") errs.push("Set contains operators require an RTarget");
      break;
    case "regexp":
    case "version":
    case "semver":
      break;
    case "=":
    case "==":
    case "is":
    case "!=":
    case "not":
    case "<":
    case "<=":
    case ">":
    case ">=":
      if (str(a, "RTarget") === "") errs.push(`Operator ${goQuote(operand)} requires an RTarget`);
      break;
    default:
      errs.push(`Unknown affinity operator ${goQuote(operand)}`);
  }
  if (str(a, "LTarget") === "") errs.push("No LTarget provided but is required");
  const weight = num(a, "Weight");
  if (weight === 0) errs.push("Affinity weight cannot be zero");
  if (weight > 100 || weight < -100) errs.push("Affinity weight must be within the range [-100,100]");
  return errs;
}

function validateSpread(s: Obj): string[] {
  const errs: string[] = [];
  if (str(s, "Attribute") === "") errs.push("Missing spread attribute");
  const weight = num(s, "Weight");
  if (weight <= 0 || weight > 100) errs.push("Spread block must have a positive weight from 0 to 100");
  const seen = new Set<string>();
  let sum = 0;
  for (const target of items(s, "SpreadTarget")) {
    const value = str(target, "Value");
    if (seen.has(value)) errs.push(`Spread target value ${goQuote(value)} already defined`);
    else seen.add(value);
    const percent = num(target, "Percent");
    if (percent > 100) errs.push(`Spread target percentage for value ${goQuote(value)} must be between 0 and 100`);
    sum += percent;
  }
  if (sum > 100) errs.push(`Sum of spread target percentages must not be greater than 100%; got ${sum}%`);
  return errs;
}

/** Constraints / affinities / spreads of one level, with the system-job rules. */
export function validatePlacement(owner: Obj, jobType: string, errs: string[], which: "Constraints" | "Affinities" | "Spreads"): void {
  if (which === "Constraints") {
    items(owner, "Constraints").forEach((c, i) => {
      const inner = validateConstraint(c);
      if (inner.length > 0) errs.push(`Constraint ${i + 1} validation failed: ${nested(inner)}`);
    });
    return;
  }
  if (which === "Affinities") {
    if (jobType === "system") {
      if (isSet(owner, "Affinities")) errs.push("System jobs may not have an affinity block");
      return;
    }
    items(owner, "Affinities").forEach((a, i) => {
      const inner = validateAffinity(a);
      if (inner.length > 0) errs.push(`Affinity ${i + 1} validation failed: ${nested(inner)}`);
    });
    return;
  }
  if (jobType === "system") {
    if (isSet(owner, "Spreads")) errs.push("System jobs may not have a spread block");
    return;
  }
  items(owner, "Spreads").forEach((s, i) => {
    const inner = validateSpread(s);
    if (inner.length > 0) errs.push(`Spread ${i + 1} validation failed: ${nested(inner)}`);
  });
}
