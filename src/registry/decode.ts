/**
 * Decoding request bodies the way Go's encoding/json does it for the
 * registry's structs: keys match field names case-insensitively (the last
 * key for a field wins), unknown keys are ignored, and a value of the wrong
 * JSON type fails with Go's `json: cannot unmarshal …` text. Syntax errors
 * keep Go's common forms (`EOF`, `unexpected EOF`, `invalid character …`,
 * written by core/go/json-errors); the context words of Go's scanner are
 * approximated.
 */

export class DecodeError extends Error {}

/** Runs a decode step; a DecodeError becomes Consul's 400 `Request decode failed: <Go error>`. */
export function decodingRequest<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (error instanceof DecodeError) throw new RegistryError(400, `Request decode failed: ${error.message}`);
    throw error;
  }
}

import { RegistryError } from "./http.js";
import { exceedsValueCount, excessiveNesting, parseBodyOnce, TOO_MANY_VALUES } from "../core/json.js";
import { jsonKind, maxDepthError, syntaxError, unmarshalTypeError } from "../core/go/json-errors.js";

/** Go's encoding/json scanner refuses a document nested past this many arrays and objects (maxNestingDepth). */
export const GO_MAX_NESTING_DEPTH = 10_000;

export type FieldType = "string" | "[]string" | "uint64" | "bool" | "map[string]string" | "any" | "object" | "[]object";

/** Parses the body text as Go's json.Decoder would see it. */
export function parseGoJSON(text: string, request?: Request): unknown {
  if (text.trim() === "") throw new DecodeError("EOF");
  if (exceedsValueCount(text)) throw new RegistryError(413, TOO_MANY_VALUES);
  // Go's scanner stops at the first bracket past its depth limit, before anything is decoded.
  const tooDeep = excessiveNesting(text, GO_MAX_NESTING_DEPTH);
  if (tooDeep >= 0) throw new DecodeError(maxDepthError(text[tooDeep]!));
  try {
    return request ? parseBodyOnce(request, text) : JSON.parse(text);
  } catch (error) {
    throw new DecodeError(syntaxError(text, (error as Error).message));
  }
}

/**
 * Maps a decoded JSON object onto a struct's fields: exact or case-folded
 * key matches, in document order (so the last one wins), type-checked.
 * `null` leaves a scalar field unset and makes a slice or map nil, as Go does.
 */
export function decodeStruct(value: unknown, fields: Readonly<Record<string, FieldType>>, typeName: string): Record<string, unknown> {
  if (value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new DecodeError(unmarshalTypeError(jsonKind(value), typeName));
  const byFolded = new Map(Object.keys(fields).map((f) => [f.toLowerCase(), f]));
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const field = Object.hasOwn(fields, key) ? key : byFolded.get(key.toLowerCase());
    if (!field) continue;
    if (raw === null) {
      const type = fields[field]!;
      if (type.startsWith("[]") || type.startsWith("map")) out[field] = null;
      else delete out[field];
      continue;
    }
    out[field] = checkType(raw, fields[field]!, field);
  }
  return out;
}

function checkType(raw: unknown, type: FieldType, field: string): unknown {
  const mismatch = (kind: string, goType: string) => new DecodeError(unmarshalTypeError(kind, goType, `.${field}`));
  switch (type) {
    case "any":
      return raw;
    case "string":
      if (typeof raw !== "string") throw mismatch(jsonKind(raw), "string");
      return raw;
    case "bool":
      if (typeof raw !== "boolean") throw mismatch(jsonKind(raw), "bool");
      return raw;
    case "uint64":
      if (typeof raw !== "number" || !Number.isInteger(raw) || raw < 0) throw mismatch(typeof raw === "number" ? `number ${raw}` : jsonKind(raw), "uint64");
      return raw;
    case "[]string":
      if (!Array.isArray(raw)) throw mismatch(jsonKind(raw), "[]string");
      for (const item of raw) if (typeof item !== "string" && item !== null) throw mismatch(jsonKind(item), "string");
      return raw.map((item) => item ?? "");
    case "map[string]string": {
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch(jsonKind(raw), "map[string]string");
      // Go stores a null element as the element type's zero value (""), without an error.
      const entries = Object.entries(raw as Record<string, unknown>);
      for (const [, item] of entries) if (typeof item !== "string" && item !== null) throw mismatch(jsonKind(item), "string");
      return entries.some(([, item]) => item === null) ? Object.fromEntries(entries.map(([key, item]) => [key, item ?? ""])) : raw;
    }
    case "object":
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch(jsonKind(raw), "struct");
      return raw;
    case "[]object":
      if (!Array.isArray(raw)) throw mismatch(jsonKind(raw), "[]struct");
      for (const item of raw) if (item !== null && (typeof item !== "object" || Array.isArray(item))) throw mismatch(jsonKind(item), "struct");
      return raw.filter((item) => item !== null);
  }
}
