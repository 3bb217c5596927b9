/**
 * Decoding a `PUT /v1/txn` body as Consul does: `lib.DecodeJSON` into the
 * API's `api.TxnOps`, a json.Decoder with DisallowUnknownFields, so an
 * unknown key anywhere in the typed part is an error, known keys match
 * case-insensitively, and the first error in document order is the one
 * reported (`json: unknown field "X"`, `json: cannot unmarshal string into
 * Go struct field KVTxnOp.KV.Flags of type uint64`, base64's `illegal
 * base64 data at input byte N`). The route wraps it as
 * `Failed to parse body: <error>` (agent/txn_endpoint.go convertOps).
 *
 * `api.TxnOp` has KV, Node, Service and Check only: a `Session` op (the
 * state store's session delete) cannot be sent over HTTP, so it is refused
 * as an unknown field, as Consul refuses it.
 */
import { jsonKind, unmarshalTypeError } from "../core/go/json-errors.js";
import { MAX_UINT64, type Uint64 } from "../core/uint64.js";
import { DecodeError } from "./decode.js";

type Kind = "string" | "bool" | "int" | "uint64" | "bytes" | "map[string]string" | "[]string" | "any";
interface StructSpec {
  /** The Go type's name, as UnmarshalTypeError names the innermost struct. */
  readonly name: string;
  readonly fields: Readonly<Record<string, Kind | StructSpec>>;
}

/** What the decoded struct keeps: the value of each field the document set. */
export type Decoded = Record<string, unknown>;

const LOCALITY: StructSpec = { name: "Locality", fields: { Region: "string", Zone: "string" } };

const KV_OP: StructSpec = {
  name: "KVTxnOp",
  fields: { Verb: "string", Key: "string", Value: "bytes", Flags: "uint64", Index: "uint64", Session: "string", Namespace: "string", Partition: "string" },
};

const NODE: StructSpec = {
  name: "Node",
  fields: {
    ID: "string",
    Node: "string",
    Address: "string",
    Datacenter: "string",
    TaggedAddresses: "map[string]string",
    Meta: "map[string]string",
    CreateIndex: "uint64",
    ModifyIndex: "uint64",
    Partition: "string",
    PeerName: "string",
    Locality: LOCALITY,
  },
};

const WEIGHTS: StructSpec = { name: "AgentWeights", fields: { Passing: "int", Warning: "int" } };

/** api.AgentService; the Connect/proxy parts are taken as they come (the registry keeps typical services only). */
const AGENT_SERVICE: StructSpec = {
  name: "AgentService",
  fields: {
    Kind: "string",
    ID: "string",
    Service: "string",
    Tags: "[]string",
    Meta: "map[string]string",
    Port: "int",
    Ports: "any",
    Address: "string",
    SocketPath: "string",
    TaggedAddresses: "any",
    Weights: WEIGHTS,
    EnableTagOverride: "bool",
    CreateIndex: "uint64",
    ModifyIndex: "uint64",
    ContentHash: "string",
    Proxy: "any",
    Connect: "any",
    PeerName: "string",
    Namespace: "string",
    Partition: "string",
    Datacenter: "string",
    Locality: LOCALITY,
  },
};

const HEALTH_CHECK: StructSpec = {
  name: "HealthCheck",
  fields: {
    Node: "string",
    CheckID: "string",
    Name: "string",
    Status: "string",
    Notes: "string",
    Output: "string",
    ServiceID: "string",
    ServiceName: "string",
    ServiceTags: "[]string",
    Type: "string",
    Namespace: "string",
    Partition: "string",
    ExposedPort: "int",
    PeerName: "string",
    // api.HealthCheckDefinition has its own UnmarshalJSON (durations as text or nanoseconds); the catalog keeps none of it.
    Definition: "any",
    CreateIndex: "uint64",
    ModifyIndex: "uint64",
  },
};

const TXN_OP: StructSpec = {
  name: "TxnOp",
  fields: {
    KV: KV_OP,
    Node: { name: "NodeTxnOp", fields: { Verb: "string", Node: NODE } },
    Service: { name: "ServiceTxnOp", fields: { Verb: "string", Node: "string", Service: AGENT_SERVICE } },
    Check: { name: "CheckTxnOp", fields: { Verb: "string", Check: HEALTH_CHECK } },
  },
};

/** A JSON integer too long for a double, kept as its digits until its field's type decides (see protectBigIntegers). */
const BIG_INTEGER = "\u0000uint:";

/**
 * Parses and decodes the ops. Null or `[]` is no ops; an op with none of
 * KV/Node/Service/Check set decodes to `{}` (Consul skips it).
 */
export function decodeTxnOps(text: string): Decoded[] {
  let value: unknown;
  try {
    value = JSON.parse(protectBigIntegers(text));
  } catch {
    // Syntax errors are the caller's: it parses the text with Go's error texts first.
    throw new DecodeError("unexpected EOF");
  }
  if (value === null) return [];
  if (!Array.isArray(value)) throw new DecodeError(unmarshalTypeError(jsonKind(value), "api.TxnOps"));
  return value.map((op) => {
    if (op === null) return {};
    if (typeof op !== "object" || Array.isArray(op)) throw new DecodeError(unmarshalTypeError(jsonKind(op), "api.TxnOp"));
    return decodeStruct(op as Record<string, unknown>, TXN_OP, []);
  });
}

function decodeStruct(value: Record<string, unknown>, spec: StructSpec, path: string[]): Decoded {
  const byFolded = new Map(Object.keys(spec.fields).map((f) => [f.toLowerCase(), f]));
  const out: Decoded = {};
  for (const [key, raw] of Object.entries(value)) {
    const field = Object.hasOwn(spec.fields, key) ? key : byFolded.get(key.toLowerCase());
    if (field === undefined) throw new DecodeError(`json: unknown field ${JSON.stringify(key)}`);
    const fieldPath = [...path, field];
    const kind = spec.fields[field]!;
    if (typeof kind !== "string") {
      if (raw === null) {
        delete out[field];
        continue;
      }
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch(raw, `api.${kind.name}`, spec, fieldPath);
      out[field] = decodeStruct(raw as Record<string, unknown>, kind, fieldPath);
      continue;
    }
    out[field] = decodeValue(raw, kind, spec, fieldPath);
  }
  return out;
}

function decodeValue(raw: unknown, kind: Kind, spec: StructSpec, path: string[]): unknown {
  if (raw === null) return kind === "bytes" || kind === "[]string" || kind === "map[string]string" || kind === "any" ? null : undefined;
  switch (kind) {
    case "any":
      return raw;
    case "string":
      if (typeof raw !== "string" || raw.startsWith(BIG_INTEGER)) throw mismatch(raw, "string", spec, path);
      return raw;
    case "bool":
      if (typeof raw !== "boolean") throw mismatch(raw, "bool", spec, path);
      return raw;
    case "int":
      if (!isInteger(raw) || !Number.isSafeInteger(Number(bigDigits(raw)))) throw mismatch(raw, "int", spec, path, true);
      return Number(bigDigits(raw));
    case "uint64": {
      if (!isInteger(raw)) throw mismatch(raw, "uint64", spec, path, true);
      const digits = bigDigits(raw);
      if (digits.startsWith("-") || BigInt(digits) > MAX_UINT64) throw mismatch(raw, "uint64", spec, path, true);
      return uint64Of(digits);
    }
    case "bytes": {
      if (typeof raw !== "string" || raw.startsWith(BIG_INTEGER)) throw mismatch(raw, "[]uint8", spec, path);
      return decodeBase64(raw);
    }
    case "[]string":
      if (!Array.isArray(raw)) throw mismatch(raw, "[]string", spec, path);
      for (const item of raw) if (item !== null && typeof item !== "string") throw mismatch(item, "string", spec, path);
      return raw.map((item) => item ?? "");
    case "map[string]string": {
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch(raw, "map[string]string", spec, path);
      const entries = Object.entries(raw as Record<string, unknown>);
      for (const [, item] of entries) if (item !== null && typeof item !== "string") throw mismatch(item, "string", spec, path);
      return Object.fromEntries(entries.map(([k, item]) => [k, item ?? ""]));
    }
  }
}

/** Go names a number's literal in the error for numeric targets (`number -1`), only its kind otherwise. */
function mismatch(raw: unknown, goType: string, spec: StructSpec, path: string[], numeric = false): DecodeError {
  const isBig = typeof raw === "string" && raw.startsWith(BIG_INTEGER);
  const kind = isBig ? "number" : jsonKind(raw);
  const literal = numeric && (isBig || typeof raw === "number") ? `number ${isBig ? (raw as string).slice(BIG_INTEGER.length) : goNumberText(raw as number)}` : kind;
  return new DecodeError(unmarshalTypeError(literal, goType, `${spec.name}.${path.join(".")}`));
}

function goNumberText(n: number): string {
  return Number.isInteger(n) && Math.abs(n) >= 1e21 ? BigInt(n).toString() : String(n);
}

function isInteger(raw: unknown): boolean {
  return (typeof raw === "number" && Number.isInteger(raw)) || (typeof raw === "string" && raw.startsWith(BIG_INTEGER));
}

function bigDigits(raw: unknown): string {
  return typeof raw === "string" ? raw.slice(BIG_INTEGER.length) : BigInt(raw as number).toString();
}

function uint64Of(digits: string): Uint64 {
  const value = BigInt(digits);
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
}

/**
 * JSON.parse rounds integers past 2^53, and a client's KV Flags use all 64
 * bits (the Go lock helpers' 0xe0f69a2baa414de0): integer literals of 16
 * digits or more, outside strings, become marked strings that keep every
 * digit. A fraction or exponent leaves the literal alone.
 */
function protectBigIntegers(text: string): string {
  let out = "";
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Skip the string: to its closing quote not preceded by an odd run of backslashes.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
      continue;
    }
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const literal = text.slice(i, end);
      if (/^-?[0-9]{16,}$/.test(literal)) {
        out += `${text.slice(last, i)}"${BIG_INTEGER.replace("\u0000", "\\u0000")}${literal}"`;
        last = end;
      }
      i = end - 1;
    }
  }
  return last === 0 ? text : out + text.slice(last);
}

const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/**
 * Go's base64.StdEncoding.Decode as encoding/json runs it for a []byte:
 * newlines are skipped, padding is required, and the error names the byte
 * offset where Go's decoder gave up. Returns the value as base64 (how KV rows keep it).
 */
export function decodeBase64(text: string): string {
  const fail = (at: number) => new DecodeError(`illegal base64 data at input byte ${at}`);
  const clean: string[] = [];
  let si = 0;
  while (si < text.length) {
    const quantum: string[] = [];
    let padded = false;
    while (quantum.length < 4) {
      if (si === text.length) {
        if (quantum.length === 0) break;
        throw fail(si - quantum.length);
      }
      const ch = text[si++]!;
      if (ch === "\n" || ch === "\r") continue;
      if (BASE64.includes(ch)) {
        quantum.push(ch);
        continue;
      }
      if (ch !== "=") throw fail(si - 1);
      // Padding: only after two or three characters of a quantum.
      if (quantum.length < 2) throw fail(si - 1);
      if (quantum.length === 2) {
        while (si < text.length && (text[si] === "\n" || text[si] === "\r")) si++;
        if (si === text.length) throw fail(text.length);
        if (text[si] !== "=") throw fail(si - 1);
        si++;
      }
      while (si < text.length && (text[si] === "\n" || text[si] === "\r")) si++;
      if (si < text.length) throw fail(si);
      padded = true;
      break;
    }
    if (quantum.length === 0) break;
    clean.push(quantum.join("") + (padded ? "=".repeat(4 - quantum.length) : ""));
    if (padded) break;
  }
  // Re-encode, so the stored value is canonical base64 of the decoded bytes.
  return Buffer.from(clean.join(""), "base64").toString("base64");
}
