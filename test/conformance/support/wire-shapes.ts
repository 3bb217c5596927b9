/**
 * Checks a JSON answer against the key sets the wire-shape oracle
 * (test/oracles/wire) reads off the products' api structs: which keys the
 * product's encoder always writes (absent in standin = the client silently
 * reads a zero value), and which keys standin sends that the struct does not
 * have (kept apart: Nomad's server structs carry fields its api lacks, so an
 * extra key is reported, not failed).
 */

/** One key of a struct as the oracle prints it. */
export interface OracleField {
  key: string;
  /** The encoder leaves the key out for a zero value (`omitempty`, Nomad's struct-level omitempty). */
  omit: boolean;
  /** "scalar", "any", "struct:<name>", "slice:<type>" or "map:<type>". */
  type: string;
}

export interface OracleSchema {
  roots: string[];
  types: Record<string, OracleField[]>;
}

export interface ShapeFindings {
  /** "<struct>.<key>" the product always writes and standin left out. */
  missing: Set<string>;
  /** "<struct>.<key>" standin sent that the struct does not have. */
  extra: Set<string>;
}

/** Walks `value` as a `type` (an oracle type descriptor), adding what differs to `findings`. */
export function checkShape(schema: OracleSchema, value: unknown, type: string, findings: ShapeFindings): void {
  if (value === null || value === undefined || type === "scalar" || type === "any") return;
  if (type.startsWith("slice:")) {
    if (Array.isArray(value)) for (const item of value) checkShape(schema, item, type.slice(6), findings);
    return;
  }
  if (type.startsWith("map:")) {
    if (isObject(value)) for (const item of Object.values(value)) checkShape(schema, item, type.slice(4), findings);
    return;
  }
  if (!type.startsWith("struct:") || !isObject(value)) return;
  const name = type.slice(7);
  const fields = schema.types[name];
  if (!fields) throw new Error(`the oracle printed no struct ${name}`);
  const known = new Set(fields.map((f) => f.key));
  for (const field of fields) {
    if (!(field.key in value)) {
      if (!field.omit) findings.missing.add(`${name}.${field.key}`);
      continue;
    }
    checkShape(schema, value[field.key], field.type, findings);
  }
  for (const key of Object.keys(value)) if (!known.has(key)) findings.extra.add(`${name}.${key}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
