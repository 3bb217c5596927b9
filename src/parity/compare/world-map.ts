/**
 * The map between the recorded world and standin's, learned while the
 * exchanges are compared (see nature.ts for what is mapped and why). It
 * answers two questions: are these two values the same once mapped, and
 * what does a recorded request become in standin's world (its IDs, secrets,
 * node names and the indexes it sends back replaced by standin's).
 */
import { createHash } from "node:crypto";
import { Bijection, OrderMap, UndoLog } from "./correspondence.js";
import { instantMs, type Nature, redactedIn, replaceReferences, skeleton, uuidsIn } from "./nature.js";

/** How far apart two instants may be, offset from each run's start, and still be the same (the upstream takes time to answer; standin's clock stands still); `--time-tolerance` changes it. */
export const DEFAULT_TIME_TOLERANCE_MS = 1000;
/** Query parameters that carry an index back to the product (blocking queries, check-and-set). */
const INDEX_PARAMETERS = new Set(["index", "cas", "check_index", "modify_index"]);

export class WorldMap {
  readonly log = new UndoLog();
  private readonly ids = new Bijection<string>(this.log);
  private readonly secrets = new Bijection<string>(this.log);
  private readonly names = new Bijection<string>(this.log);
  private readonly ports = new Bijection<number>(this.log);
  private readonly hashes = new Bijection<string>(this.log);
  /** Each product counts its own indexes. */
  private readonly indexes = new Map<string, OrderMap>();
  /**
   * Indexes past 2^53 are not counters but values derived from an ID
   * (Consul's `/v1/event/list` index is its last event's ID folded to 64
   * bits): paired one to one, as their decimal text, which a JavaScript
   * number would round.
   */
  private readonly derivedIndexes = new Bijection<string>(this.log);

  constructor(
    /** The recording's start (its wall clock) and standin's (its virtual clock), in ms. */
    private readonly recordedStartMs: number,
    private readonly localStartMs: number,
    private readonly timeToleranceMs: number = DEFAULT_TIME_TOLERANCE_MS,
  ) {}

  /** True when a recorded value and standin's are the same once mapped (learning the pairs they make). */
  same(nature: Nature, recorded: unknown, local: unknown, service: string): boolean {
    switch (nature) {
      case "index":
        return this.sameIndex(service, recorded as number | string, local as number | string);
      case "time":
        return this.sameInstant(recorded, local);
      case "name":
        return typeof local === "string" && this.names.pair(recorded as string, local);
      case "port":
        return typeof local === "number" && this.ports.pair(recorded as number, local);
      case "hash":
        return typeof local === "string" && this.hashes.pair(recorded as string, local);
      case "plain":
        if (typeof recorded === "string" && typeof local === "string") return this.sameText(recorded, local);
        return recorded === local;
    }
  }

  /** Indexes as numbers, or as the decimal text of a header or query (which may not fit a number). */
  sameIndex(service: string, recorded: number | string, local: number | string): boolean {
    if (isDerivedIndex(recorded) || isDerivedIndex(local)) return this.derivedIndexes.pair(String(recorded), String(local));
    const [r, l] = [Number(recorded), Number(local)];
    // 0 means "none yet" in both products, never a position in the order.
    if (r === 0 || l === 0) return r === l;
    return this.indexesOf(service).pair(r, l);
  }

  private sameInstant(recorded: unknown, local: unknown): boolean {
    const [r, l] = [instantMs(recorded), instantMs(local)];
    if (r === undefined || l === undefined) return r === l && typeof recorded === typeof local;
    const [rOffset, lOffset] = [r - this.recordedStartMs, l - this.localStartMs];
    // Whatever was there before the run (a dev agent's node registered before the suite started, a fixture's at standin's start) is "before".
    if (rOffset <= 0 && lOffset <= 0) return true;
    return Math.abs(rOffset - lOffset) <= this.timeToleranceMs;
  }

  /** Strings equal but for their IDs and secrets, which pair one to one. */
  private sameText(recorded: string, local: string): boolean {
    if (recorded === local && uuidsIn(recorded).length === 0) return true;
    // A whole secret: standin's is whatever its product hands out (a UUID for both ACL systems).
    if (/^standin-redacted:sha256:[0-9a-f]{16}$/.test(recorded)) return this.secrets.pair(recorded, local);
    const generic = (text: string) => skeleton(text).replaceAll("\u0000secret", "\u0000id");
    if (generic(recorded) !== generic(local)) return false;
    const recordedRefs = references(recorded);
    const localRefs = references(local);
    return recordedRefs.every(({ kind, value }, i) => (kind === "secret" ? this.secrets : this.ids).pair(value, localRefs[i]!.value));
  }

  /** standin's counterpart of a recorded ID, once learned. */
  localIdOf(recorded: string): string | undefined {
    return this.ids.localOf(recorded);
  }

  /** True when an ID of standin's is paired with a recorded one already. */
  isPairedLocalId(local: string): boolean {
    return this.ids.hasLocal(local);
  }

  /**
   * A recorded value as standin's world has it by the pairs learned so far
   * alone (nothing is learned): its IDs, secrets or node name replaced by
   * their counterparts. Undefined when it holds one not paired yet, or is
   * of a nature mapped by order or offset (an index, a time).
   */
  translated(nature: Nature, recorded: unknown): unknown {
    if (nature === "name") return typeof recorded === "string" ? this.names.localOf(recorded) : undefined;
    if (nature !== "plain") return undefined;
    if (typeof recorded !== "string") return recorded;
    let unknown = false;
    const local = replaceReferences(recorded, (kind, value) => {
      const found = kind === "secret" ? this.secrets.localOf(value) : this.ids.localOf(value);
      if (found === undefined) unknown = true;
      return found;
    });
    return unknown ? undefined : local;
  }

  /** A recorded request's path and query in standin's world. */
  localPath(pathAndQuery: string, service: string): string {
    const mark = pathAndQuery.indexOf("?");
    const path = mark < 0 ? pathAndQuery : pathAndQuery.slice(0, mark);
    const localPath = path
      .split("/")
      .map((segment) => this.localSegment(segment))
      .join("/");
    if (mark < 0) return localPath;
    const query = pathAndQuery
      .slice(mark + 1)
      .split("&")
      .map((pair) => {
        const equals = pair.indexOf("=");
        if (equals < 0) return pair;
        const [name, value] = [pair.slice(0, equals), pair.slice(equals + 1)];
        if (INDEX_PARAMETERS.has(name) && /^\d+$/.test(value)) {
          return `${name}=${isDerivedIndex(value) ? (this.derivedIndexes.localOf(value) ?? value) : this.localIndex(service, Number(value))}`;
        }
        return `${name}=${this.localSegment(value)}`;
      })
      .join("&");
    return `${localPath}?${query}`;
  }

  /**
   * Secrets standin's starting world holds (a fixture's ACL tokens, echo's
   * API keys): a recorded reference that is the hash of one of them stands
   * for the same secret here (the user gave the real product the same one).
   */
  learnStartingSecrets(secrets: Iterable<string>): void {
    for (const secret of secrets) this.startingSecrets.set(secretReference(secret), secret);
  }

  private readonly startingSecrets = new Map<string, string>();

  /** A recorded request header's value in standin's world (its secrets and IDs). */
  localText(text: string): string {
    const decodedSecret = text.includes("standin-redacted%3A") ? text.replaceAll("%3A", ":") : text;
    return replaceReferences(decodedSecret, (kind, value) => (kind === "secret" ? (this.secrets.localOf(value) ?? this.startingSecrets.get(value)) : this.ids.localOf(value)));
  }

  /** A recorded request body in standin's world: JSON walked (names, indexes, IDs), other text by its IDs and secrets. */
  localBody(text: string, service: string): string {
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch {
      return this.localText(text);
    }
    const walk = (value: unknown, key?: string): unknown => {
      if (Array.isArray(value)) return value.map((item) => walk(item, key));
      if (value !== null && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [this.localText(k), walk(v, k)]));
      }
      // A whole string that is an ID's start (a search's `"Prefix": "8ab37"`) is mapped as a path segment's is.
      if (typeof value === "string") return this.names.localOf(value) ?? this.localIdPrefix(value) ?? this.localText(value);
      if (typeof value === "number" && key?.endsWith("Index") && value > 0) return this.localIndex(service, value);
      return value;
    };
    return JSON.stringify(walk(document));
  }

  private localSegment(segment: string): string {
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return segment;
    }
    const name = this.names.localOf(decoded);
    if (name !== undefined) return encodeURIComponent(name);
    const prefix = this.localIdPrefix(decoded);
    if (prefix !== undefined) return prefix;
    const local = this.localText(decoded);
    return local === decoded ? segment : encodeURIComponent(local);
  }

  /**
   * An ID's prefix sent as a whole path segment, query value or JSON string
   * (Nomad's short IDs: `nomad alloc status 5a0f1c2e`, `?prefix=5a0f`, a
   * search's `Prefix`): when it
   * starts exactly one ID learned so far, the same length of that ID's
   * counterpart; otherwise undefined.
   */
  private localIdPrefix(value: string): string | undefined {
    if (!isIdPrefix(value)) return undefined;
    let found: string | undefined;
    for (const [recorded, local] of this.ids.pairs()) {
      if (!recorded.startsWith(value)) continue;
      if (found !== undefined) return undefined;
      found = local.slice(0, value.length);
    }
    return found;
  }

  private localIndex(service: string, recorded: number): number {
    return this.indexesOf(service).localOf(recorded) ?? recorded;
  }

  private indexesOf(service: string): OrderMap {
    let map = this.indexes.get(service);
    if (!map) {
      map = new OrderMap(this.log);
      this.indexes.set(service, map);
    }
    return map;
  }
}

function references(text: string): Array<{ kind: "id" | "secret"; value: string }> {
  const found: Array<{ at: number; kind: "id" | "secret"; value: string }> = [];
  for (const value of redactedIn(text)) found.push({ at: text.indexOf(value), kind: "secret", value });
  let from = 0;
  for (const value of uuidsIn(text)) {
    const at = text.indexOf(value, from);
    from = at + value.length;
    found.push({ at, kind: "id", value });
  }
  return found.sort((a, b) => a.at - b.at);
}

/** The reference a recording writes for a secret (src/parity/recording.ts). */
export function secretReference(secret: string): string {
  return `standin-redacted:sha256:${createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16)}`;
}

/**
 * The start of a UUID, 4 to 35 characters, with a letter in it or at least
 * 8 long: a shorter all-digit value is a count or a size (`?per_page=1000`),
 * not an ID.
 */
function isIdPrefix(value: string): boolean {
  return /^[0-9a-f]{4}[0-9a-f-]{0,31}$/.test(value) && (value.length >= 8 || /[a-f]/.test(value));
}

/** An index no counter reaches: one derived from an ID (see `derivedIndexes`). */
function isDerivedIndex(value: number | string): boolean {
  return !Number.isSafeInteger(Number(value));
}
