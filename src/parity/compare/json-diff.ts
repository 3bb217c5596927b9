/**
 * Two JSON answers compared as documents, once the world map has mapped what
 * differs by nature: each difference is a JSON path (`$.Allocations[0].ID`)
 * and a kind — `missing` (the upstream has it, standin not), `extra`
 * (standin has it, the upstream not), `type`, `value` (an index that moves
 * differently is a `value` too, said so), and `order` for a list holding
 * the same elements in another order (once for the list, not per element).
 */
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

export function diffJson(world: WorldMap, service: string, recorded: unknown, local: unknown): BodyDifference[] {
  const out: BodyDifference[] = [];
  new JsonComparer(world, service, out).compare(recorded, local, "$", undefined, undefined);
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
    if (recorded.length === local.length && recorded.length <= REORDER_SEARCH_LIMIT) {
      const pairing = this.pairInAnyOrder(recorded, local, key);
      if (pairing) {
        if (!bothSortedByAnId(recorded, local)) this.out.push({ kind: "order", at, note: "the same elements in another order" });
        return;
      }
    }
    const shared = Math.min(recorded.length, local.length);
    for (let i = 0; i < shared; i++) this.compare(recorded[i], local[i], `${at}[${i}]`, key, undefined);
    for (let i = shared; i < recorded.length; i++) this.out.push({ kind: "missing", at: `${at}[${i}]`, recorded: recorded[i] });
    for (let i = shared; i < local.length; i++) this.out.push({ kind: "extra", at: `${at}[${i}]`, standin: local[i] });
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
