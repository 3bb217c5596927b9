/**
 * What differs by nature between two worlds: the rules that say which
 * values a parity comparison must map (the upstream's value ↔ standin's at
 * the same place) instead of comparing them as they are. Two runs of the
 * same suite against two products never share IDs, secrets, raft indexes,
 * wall times, node names, addresses, ports or content hashes; they share
 * what those values mean. Kept in this one small module so the rules can be
 * read, and tested as a table, in one place.
 */

/** How a value at a place is compared. */
export type Nature =
  /** Raft indexes (`*Index`, the index headers): order-preserving. */
  | "index"
  /** Instants: by offset from the run's start. */
  | "time"
  /** Names and addresses of the world's nodes: one-to-one by first appearance. */
  | "name"
  | "port"
  | "hash"
  /** Anything else: equal, with the IDs and secrets inside strings mapped. */
  | "plain";

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
/** A secret as a recording writes it (src/parity/recording.ts). */
const REDACTED = /standin-redacted:sha256:[0-9a-f]{16}/g;
/** RFC 3339 with optional fraction and a zone (Go's time.Time in JSON). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
/** Go's zero time: "never", the same in both worlds. */
export const ZERO_TIME = "0001-01-01T00:00:00Z";

/** Keys whose value names a node or an address of this world. */
const NAME_KEYS = new Set(["Node", "NodeName", "Address", "HTTPAddr", "RPCAddr", "SerfAddr", "Addr", "AdvertiseAddr", "LeaderAddr", "Leader"]);
/** An IP address, with or without a port (`/v1/status/leader` answers one alone). */
const ADDRESS = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.]+\])(:\d+)?$/;
/** Keys whose value is a hash of content. */
const HASH_KEYS = new Set(["ContentHash", "Hash", "SecretsHash", "Checksum"]);

/** Keys ending like a time that hold a duration (Nomad's update block, in ns). */
const DURATION_KEYS = new Set(["MinHealthyTime"]);
/** Instants between 2000 and 2100, the only ones a run can write: a duration under a time-like key is none. */
const EARLIEST_MS = Date.UTC(2000, 0, 1);
const LATEST_MS = Date.UTC(2100, 0, 1);

function plausibleInstant(value: number): boolean {
  const ms = instantMs(value);
  return ms !== undefined && ms >= EARLIEST_MS && ms < LATEST_MS;
}

/** Keys only a node (Nomad's, or a Consul member) has: its `Name` is then a node name. */
const NODE_KEYS = ["NodeClass", "NodePool", "Addr"];

/**
 * The nature of a value by the key it is under (the last object key on the
 * path; array elements inherit their list's key) and the object holding it
 * (a node's `Name` is a node name).
 */
export function natureOf(key: string | undefined, value: unknown, holder?: Record<string, unknown>): Nature {
  if (typeof value === "string" && ADDRESS.test(value)) return "name";
  if (key === undefined) return "plain";
  if (typeof value === "number" && Number.isInteger(value)) {
    if (key.endsWith("Index")) return "index";
    if (key === "Port" || key.endsWith("Port")) return "port";
    if ((key === "Time" || key.endsWith("Time") || key.endsWith("At")) && !DURATION_KEYS.has(key) && plausibleInstant(value)) return "time";
  }
  if (typeof value === "string") {
    if (RFC3339.test(value)) return "time";
    if (NAME_KEYS.has(key)) return "name";
    if (key === "Name" && holder !== undefined && NODE_KEYS.some((k) => k in holder)) return "name";
    if (HASH_KEYS.has(key)) return "hash";
  }
  return "plain";
}

export function isIndexHeader(name: string): boolean {
  return name === "x-nomad-index" || name === "x-consul-index";
}

/** The IDs in a string, in order. */
export function uuidsIn(text: string): string[] {
  return text.match(UUID) ?? [];
}

/** The secret references in a recorded string, in order. */
export function redactedIn(text: string): string[] {
  return text.match(REDACTED) ?? [];
}

/**
 * A string with its IDs and secrets taken out, so two strings that differ
 * only by them (`evaluation "<id>" …`) have the same skeleton.
 */
export function skeleton(text: string): string {
  return text.replace(REDACTED, "\u0000secret").replace(UUID, "\u0000id");
}

/** Replaces every ID and secret reference in `text` (what `replace` returns for one; unchanged when undefined). */
export function replaceReferences(text: string, replace: (kind: "id" | "secret", value: string) => string | undefined): string {
  return text.replace(REDACTED, (found) => replace("secret", found) ?? found).replace(UUID, (found) => replace("id", found) ?? found);
}

/**
 * An instant in milliseconds: an RFC 3339 string, or an integer under a time
 * key in nanoseconds (Nomad's `CreateTime`), milliseconds or seconds, told
 * apart by size. Undefined for Go's zero time and for 0 ("never").
 */
export function instantMs(value: unknown): number | undefined {
  if (typeof value === "string") {
    if (value === ZERO_TIME || !RFC3339.test(value)) return undefined;
    const ms = Date.parse(value);
    return Number.isNaN(ms) ? undefined : ms;
  }
  if (typeof value !== "number" || value <= 0) return undefined;
  if (value >= 1e17) return value / 1e6;
  if (value >= 1e14) return value / 1e3;
  if (value >= 1e11) return value;
  return value * 1000;
}
