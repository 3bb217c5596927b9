/**
 * Two JSON answers compared as documents, once the world map has mapped what
 * differs by nature: each difference is a JSON path (`$.Allocations[0].ID`)
 * and a kind — `missing` (the upstream has it, standin not), `extra`
 * (standin has it, the upstream not), `type`, `value` (an index that moves
 * differently is a `value` too, said so), and `order` for a list holding
 * the same elements in another order (once for the list, not per element).
 * Lists of identified things (list-identity.ts) are matched element by
 * element by identity, so one element more is one `missing` or `extra`;
 * other lists place by place.
 */
import { type Identity, type ListIdentity, listIdentity, rawKey } from "./list-identity.js";
import { natureOf } from "./nature.js";
import type { WorldMap } from "./world-map.js";

export type BodyDifferenceKind = "missing" | "extra" | "type" | "value" | "order";

export interface BodyDifference {
  readonly kind: BodyDifferenceKind;
  /** JSON path from the answer's root, `$` itself. */
  readonly at: string;
  readonly recorded?: unknown;
  readonly standin?: unknown;
  /** Said when the kind alone does not (an index moving differently, a list's order). */
  readonly note?: string;
}

/** Lists longer than this are compared element by element only (finding a reordering costs the square of the length). */
const REORDER_SEARCH_LIMIT = 200;

const ORDER = (at: string): BodyDifference => ({ kind: "order", at, note: "the same elements in another order" });

/** The differences between two documents; `root` names the place they were found (`$` for a body, `stream[3]` for a stream's event). */
export function diffJson(world: WorldMap, service: string, recorded: unknown, local: unknown, root = "$"): BodyDifference[] {
  const out: BodyDifference[] = [];
  new JsonComparer(world, service, out).compare(recorded, local, root, undefined, undefined);
  return out;
}

type Holder = Record<string, unknown> | undefined;

class JsonComparer {
  constructor(
    private readonly world: WorldMap,
    private readonly service: string,
    private readonly out: BodyDifference[],
  ) {}

  compare(recorded: unknown, local: unknown, at: string, key: string | undefined, holder: Holder): void {
    const [rType, lType] = [typeOf(recorded), typeOf(local)];
    if (rType !== lType) {
      this.out.push({ kind: "type", at, recorded, standin: local, note: `${rType} upstream, ${lType} in standin` });
      return;
    }
    if (rType === "array") {
      this.compareLists(recorded as unknown[], local as unknown[], at, key);
      return;
    }
    if (rType === "object") {
      this.compareObjects(recorded as Record<string, unknown>, local as Record<string, unknown>, at);
      return;
    }
    const nature = natureOf(key, recorded, holder);
    if (this.world.same(nature, recorded, local, this.service)) return;
    const note = nature === "index" ? "the index moves differently (it rises, or stays, where the upstream's does not)" : undefined;
    this.out.push({ kind: "value", at, recorded, standin: local, ...(note && { note }) });
  }

  private compareObjects(recorded: Record<string, unknown>, local: Record<string, unknown>, at: string): void {
    const localKeys = new Set(Object.keys(local));
    for (const [key, value] of Object.entries(recorded)) {
      const localKey = this.localKey(key, localKeys);
      const path = childPath(at, key);
      if (localKey === undefined) {
        this.out.push({ kind: "missing", at: path, recorded: value });
        continue;
      }
      localKeys.delete(localKey);
      this.compare(value, local[localKey], path, key, recorded);
    }
    for (const key of localKeys) this.out.push({ kind: "extra", at: childPath(at, key), standin: local[key] });
  }

  /** The key standin has for a recorded one: the same, or, for a key that is an ID (a map by allocation ID), its counterpart. */
  private localKey(key: string, localKeys: Set<string>): string | undefined {
    if (localKeys.has(key) && !/^[0-9a-f]{8}-/.test(key)) return key;
    for (const candidate of localKeys) {
      const mark = this.world.log.mark();
      if (this.world.same("plain", key, candidate, this.service)) return candidate;
      this.world.log.rollback(mark);
    }
    return undefined;
  }

  private compareLists(recorded: unknown[], local: unknown[], at: string, key: string | undefined): void {
    if (this.listMatches(recorded, local, key)) return;
    const identity = listIdentity(recorded, local, key);
    if (identity) {
      this.compareByIdentity(recorded, local, at, key, identity);
      return;
    }
    if (recorded.length === local.length && recorded.length <= REORDER_SEARCH_LIMIT) {
      const pairing = this.pairInAnyOrder(recorded, local, key);
      if (pairing) {
        if (!bothSortedByAnId(recorded, local)) this.out.push(ORDER(at));
        return;
      }
    }
    const shared = Math.min(recorded.length, local.length);
    for (let i = 0; i < shared; i++) this.compare(recorded[i], local[i], `${at}[${i}]`, key, undefined);
    for (let i = shared; i < recorded.length; i++) this.out.push({ kind: "missing", at: `${at}[${i}]`, recorded: recorded[i] });
    for (let i = shared; i < local.length; i++) this.out.push({ kind: "extra", at: `${at}[${i}]`, standin: local[i] });
  }

  /**
   * Lists of identified things: each recorded element is paired with
   * standin's element of the same identity, then compared; one with no
   * counterpart is `missing` (at its recorded place) or `extra` (at
   * standin's), once; the same things in another order is one `order`.
   */
  private compareByIdentity(recorded: unknown[], local: unknown[], at: string, key: string | undefined, identity: ListIdentity): void {
    const pairs = this.pairByIdentity(recorded, local, key, identity);
    const paired = [...pairs.entries()].sort((a, b) => a[0] - b[0]);
    const inOrder = paired.every(([, j], n) => n === 0 || paired[n - 1]![1] < j);
    // Each side's paired elements in its own order: both sorted by their own IDs is an order that differs by nature.
    const localInItsOrder = paired.map(([, j]) => j).sort((a, b) => a - b);
    if (
      !inOrder &&
      !bothSortedByAnId(
        paired.map(([i]) => recorded[i]),
        localInItsOrder.map((j) => local[j]),
      )
    )
      this.out.push(ORDER(at));
    for (let i = 0; i < recorded.length; i++) {
      const j = pairs.get(i);
      if (j === undefined) this.out.push({ kind: "missing", at: `${at}[${i}]`, recorded: recorded[i] });
      else this.compare(recorded[i], local[j], `${at}[${i}]`, key, undefined);
    }
    const used = new Set(pairs.values());
    for (let j = 0; j < local.length; j++) if (!used.has(j)) this.out.push({ kind: "extra", at: `${at}[${j}]`, standin: local[j] });
  }

  /**
   * recorded position → standin's position. First by the identities the
   * world map can already translate; then, among the rest (identities
   * holding IDs or names not paired yet), each with an element equal to it
   * in every field; then each with the first left whose identity can pair
   * with its own.
   */
  private pairByIdentity(recorded: unknown[], local: unknown[], key: string | undefined, identity: ListIdentity): Map<number, number> {
    const pairs = new Map<number, number>();
    const used = new Set<number>();
    const localByKey = new Map(local.map((element, j) => [rawKey(identity(element).parts.map((part) => part.value)), j]));
    recorded.forEach((element, i) => {
      const translated = identity(element).parts.map(({ nature, value }) => this.world.translated(nature, value));
      if (translated.some((value) => value === undefined)) return;
      const j = localByKey.get(rawKey(translated));
      if (j === undefined || used.has(j)) return;
      pairs.set(i, j);
      used.add(j);
    });
    const left = () => recorded.map((_, i) => i).filter((i) => !pairs.has(i));
    const take = (i: number, j: number | undefined) => {
      if (j === undefined || j < 0) return;
      pairs.set(i, j);
      used.add(j);
    };
    if (left().length <= REORDER_SEARCH_LIMIT) {
      for (const i of left())
        take(
          i,
          local.findIndex((candidate, j) => !used.has(j) && this.matches(recorded[i], candidate, key)),
        );
    }
    for (const i of left())
      take(
        i,
        local.findIndex((candidate, j) => !used.has(j) && this.sameIdentity(identity(recorded[i]), identity(candidate))),
      );
    return pairs;
  }

  /** True when two identities pair field by field (learning the pairs), else false (nothing learned). */
  private sameIdentity(recorded: Identity, local: Identity): boolean {
    const mark = this.world.log.mark();
    const same = recorded.parts.every((part, n) => this.world.same(part.nature, part.value, local.parts[n]!.value, this.service));
    if (!same) this.world.log.rollback(mark);
    return same;
  }

  /** Element by element with nothing differing (the pairs it learns kept), or false (nothing learned). */
  private listMatches(recorded: unknown[], local: unknown[], key: string | undefined): boolean {
    if (recorded.length !== local.length) return false;
    const mark = this.world.log.mark();
    for (let i = 0; i < recorded.length; i++) {
      if (!this.matches(recorded[i], local[i], key)) {
        this.world.log.rollback(mark);
        return false;
      }
    }
    return true;
  }

  /** Each recorded element paired with a distinct standin element equal to it, or undefined (nothing learned). */
  private pairInAnyOrder(recorded: unknown[], local: unknown[], key: string | undefined): number[] | undefined {
    const mark = this.world.log.mark();
    const used = new Set<number>();
    const pairing: number[] = [];
    const byId = idIndex(local);
    for (const element of recorded) {
      // The element whose ID is this one's counterpart first: a list of n known things is paired in n tries, not n².
      const likely = idsOf(element)
        .map(({ field, id }) => byId.get(`${field}\u0000${this.world.localIdOf(id) ?? ""}`))
        .find((i) => i !== undefined && !used.has(i));
      // With its ID's counterpart there, no other element can be its match (the ID is paired already): no search.
      let found: number;
      if (likely !== undefined) found = this.matches(element, local[likely], key) ? likely : -1;
      else found = local.findIndex((candidate, i) => !used.has(i) && this.matches(element, candidate, key));
      if (found < 0) {
        this.world.log.rollback(mark);
        return undefined;
      }
      used.add(found);
      pairing.push(found);
    }
    return pairing;
  }

  /** True when two values have no difference; the pairs learned are kept only then. */
  private matches(recorded: unknown, local: unknown, key: string | undefined): boolean {
    const mark = this.world.log.mark();
    const found: BodyDifference[] = [];
    new JsonComparer(this.world, this.service, found).compare(recorded, local, "$", key, undefined);
    if (found.length === 0) return true;
    this.world.log.rollback(mark);
    return false;
  }
}

/**
 * Both lists ascending by the same ID field (or by themselves, lists of IDs):
 * the products sort by ID, and the two worlds' IDs differ, so the order
 * differs by nature.
 */
function bothSortedByAnId(recorded: unknown[], local: unknown[]): boolean {
  const isId = (value: unknown) => typeof value === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(value);
  const ascending = (values: unknown[]) => values.every((value, i) => i === 0 || String(values[i - 1]) <= String(value));
  if (recorded.every(isId) && local.every(isId)) return ascending(recorded) && ascending(local);
  const first = recorded[0];
  if (typeOf(first) !== "object") return false;
  const field = (list: unknown[], name: string) => list.map((item) => (typeOf(item) === "object" ? (item as Record<string, unknown>)[name] : undefined));
  return Object.keys(first as object).some((name) => {
    const [r, l] = [field(recorded, name), field(local, name)];
    return r.every(isId) && l.every(isId) && ascending(r) && ascending(l);
  });
}

/** The IDs an element carries at its top level (`ID`, `Session`…), or the element itself when it is one. */
function idsOf(element: unknown): Array<{ field: string; id: string }> {
  if (isId(element)) return [{ field: "", id: element }];
  if (typeOf(element) !== "object") return [];
  return Object.entries(element as Record<string, unknown>)
    .filter((entry): entry is [string, string] => isId(entry[1]))
    .map(([field, id]) => ({ field, id }));
}

/** Where each ID of a list's elements is: `<field>\0<id>` → the element's position. */
function idIndex(list: unknown[]): Map<string, number> {
  const index = new Map<string, number>();
  list.forEach((element, i) => {
    for (const { field, id } of idsOf(element)) if (!index.has(`${field}\u0000${id}`)) index.set(`${field}\u0000${id}`, i);
  });
  return index;
}

function isId(value: unknown): value is string {
  return typeof value === "string" && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(value);
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function childPath(at: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}
