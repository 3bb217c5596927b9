/**
 * Step 1 of admitting a job: Go's encoding/json decoding the body into
 * `api.Job` — keys matched case-insensitively (exact name first), unknown
 * keys ignored, a repeated key decoded into the struct or map already there,
 * the first type error reported in Go's words. Driven by the `api.*` schemas
 * in schema.ts.
 *
 * Known approximation: numbers arrive already parsed, so `1.0` is accepted
 * where Go rejects it, and "number <literal>" shows JavaScript's spelling of
 * the literal.
 */
import { deepClone, isPlainObject, setOwn, type Obj } from "./objects.js";
import { JOB, type IntType, type Schema, type StructSchema } from "./schema.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";

/** A body-shape problem (wrong JSON type); the HTTP layer answers 400 with `message`. */
export class JobDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobDecodeError";
  }
}

/** reflect.Type.String() of a schema, as Go prints it in UnmarshalTypeError. */
function goTypeName(schema: Schema): string {
  switch (schema.k) {
    case "string":
      return "string";
    case "bool":
      return "bool";
    case "int":
      return schema.go;
    case "any":
      return "interface {}";
    case "raw":
      return schema.go;
    case "bytes":
      return "[]uint8";
    case "slice":
      return `[]${schema.ptr ? "*" : ""}${goTypeName(schema.elem)}`;
    case "map":
      return `map[string]${schema.ptr ? "*" : ""}${goTypeName(schema.elem)}`;
    case "struct":
      return `api.${schema.name}`;
  }
}

/** Go's decodeState.errorContext: the innermost struct type and the field path from the top. */
interface DecodeContext {
  readonly struct: string;
  readonly stack: readonly string[];
}

function typeError(what: string, schema: Schema, ctx: DecodeContext): JobDecodeError {
  return new JobDecodeError(unmarshalTypeError(what, goTypeName(schema), `${ctx.struct}.${ctx.stack.join(".")}`));
}

const INT_RANGES: Record<IntType, readonly [number, number]> = {
  int: [-(2 ** 63), 2 ** 63 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
  "time.Duration": [-(2 ** 63), 2 ** 63 - 1],
  uint64: [0, 2 ** 64 - 1],
  int8: [-128, 127],
  uint8: [0, 255],
};

/** Index of the first byte Go's base64.StdEncoding rejects, or -1 when the text decodes. */
function base64ErrorIndex(text: string): number {
  const stripped = text.replace(/[\r\n]/g, "");
  const alphabet = /[A-Za-z0-9+/]/;
  let i = 0;
  for (; i < stripped.length; i++) {
    const ch = stripped[i] ?? "";
    if (ch === "=") break;
    if (!alphabet.test(ch)) return i;
  }
  const dataLength = i;
  const padding = stripped.length - dataLength;
  if (padding > 0 && !/^={1,2}$/.test(stripped.slice(dataLength))) return dataLength;
  if (stripped.length % 4 !== 0) return stripped.length - (stripped.length % 4);
  if (padding > 0 && dataLength % 4 < 2) return dataLength;
  return -1;
}

/**
 * Decodes one JSON value into the shape of `schema`. `existing` is the value
 * already decoded for the same field (a repeated key): Go decodes structs and
 * maps into the existing value and replaces everything else.
 */
function decodeValue(schema: Schema, value: unknown, ctx: DecodeContext, existing?: unknown): unknown {
  switch (schema.k) {
    case "string":
      if (typeof value !== "string") throw typeError(jsonKind(value), schema, ctx);
      return value;
    case "bool":
      if (typeof value !== "boolean") throw typeError(jsonKind(value), schema, ctx);
      return value;
    case "int": {
      if (typeof value !== "number") throw typeError(jsonKind(value), schema, ctx);
      const [min, max] = INT_RANGES[schema.go];
      if (!Number.isInteger(value) || value < min || value > max) throw typeError(`number ${String(value)}`, schema, ctx);
      return value;
    }
    case "any":
      return deepClone(value);
    case "raw":
      if (!isPlainObject(value)) throw typeError(jsonKind(value), schema, ctx);
      return deepClone(value);
    case "bytes": {
      if (typeof value !== "string") throw typeError(jsonKind(value), schema, ctx);
      const bad = base64ErrorIndex(value);
      if (bad >= 0) throw new JobDecodeError(`illegal base64 data at input byte ${bad}`);
      return value;
    }
    case "slice": {
      if (!Array.isArray(value)) throw typeError(jsonKind(value), schema, ctx);
      return value.map((element) => {
        // A null element stays the zero value: nil for pointers (treated as an
        // empty block downstream, where Go would dereference nil), "" / 0 / false otherwise.
        if (element === null) return schema.elem.k === "struct" ? {} : zeroValue(schema.elem);
        return decodeValue(schema.elem, element, ctx);
      });
    }
    case "map": {
      if (!isPlainObject(value)) throw typeError(jsonKind(value), schema, ctx);
      const out: Obj = isPlainObject(existing) ? existing : {};
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const inner = value[key];
        if (inner === null) {
          setOwn(out, key, schema.elem.k === "struct" ? {} : zeroValue(schema.elem));
          continue;
        }
        setOwn(out, key, decodeValue(schema.elem, inner, ctx));
      }
      return out;
    }
    case "struct":
      if (!isPlainObject(value)) throw typeError(jsonKind(value), schema, ctx);
      return decodeStruct(schema, value, ctx, isPlainObject(existing) ? existing : {});
  }
}

function zeroValue(schema: Schema): unknown {
  switch (schema.k) {
    case "string":
      return "";
    case "bool":
      return false;
    case "int":
      return 0;
    default:
      return null;
  }
}

const fieldIndexes = new WeakMap<StructSchema, Map<string, string>>();

/** Go field lookup: exact name first, then a case-insensitive match. */
function findField(schema: StructSchema, key: string): string | undefined {
  const fields = schema.fields();
  if (Object.hasOwn(fields, key)) return key;
  let index = fieldIndexes.get(schema);
  if (!index) {
    index = new Map();
    for (const name of Object.keys(fields)) index.set(name.toLowerCase(), name);
    fieldIndexes.set(schema, index);
  }
  return index.get(key.toLowerCase());
}

/**
 * Decodes an object into a struct. The result holds Go field names only for
 * fields that were present with a non-null value (null leaves a pointer nil).
 */
function decodeStruct(schema: StructSchema, value: Obj, ctx: DecodeContext, into: Obj = {}): Obj {
  const fields = schema.fields();
  for (const [key, inner] of Object.entries(value)) {
    const name = findField(schema, key);
    if (name === undefined) continue; // unknown keys are ignored
    const fieldSchema = fields[name];
    if (fieldSchema === undefined) continue;
    if (inner === null) {
      delete into[name];
      continue;
    }
    const fieldCtx: DecodeContext = { struct: schema.name, stack: [...ctx.stack, name] };
    setOwn(into, name, decodeValue(fieldSchema, inner, fieldCtx, into[name]));
  }
  return into;
}

/** Decodes a register request's `Job` into the api.Job shape; a missing job or a field of the wrong type is a JobDecodeError. */
export function decodeJob(apiJob: unknown): Obj {
  if (apiJob === undefined || apiJob === null) throw new JobDecodeError("Job must be specified");
  if (!isPlainObject(apiJob)) throw typeError(jsonKind(apiJob), JOB, { struct: "JobRegisterRequest", stack: ["Job"] });
  return decodeStruct(JOB, apiJob, { struct: "Job", stack: ["Job"] });
}
