/**
 * The ports live allocations hold, per node and host IP: the `AddAllocs`
 * half of Nomad's `structs.NetworkIndex`, kept as allocations are placed,
 * change and stop instead of rebuilt for every placement.
 *
 * Placing an allocation asks each candidate node which ports are taken.
 * Rebuilding that from the node's allocations cost O(P) for P held ports,
 * and the lowest free dynamic port was found by walking up from the bottom of
 * the range past every held one, O(P) again: placing N port-asking
 * allocations on a node was O(N²). This index is derived from the allocations
 * table (its watcher sees every write and rollback; a restore drops it and
 * the next use rebuilds it), so snapshot, restore and reset keep it right.
 */
import type { Row, StoreView, Table } from "../../core/store.js";

/**
 * The part of an allocation row (model.ts) the index reads: its node, its
 * place in AddAllocs' order and the ports it holds. Declared here, not
 * imported, so the model (which builds the index) and the index do not
 * import each other.
 */
export interface PortHoldingAlloc {
  readonly ID: string;
  readonly NodeID: string;
  readonly CreateIndex: number;
  /** AllocatedPortMapping rows: HostIP, Value, IgnoreCollision. */
  readonly SharedPorts?: ReadonlyArray<Record<string, unknown>>;
}

/** Ports 0–65535 have a bit each; a port outside (never placed) is still held, only found the slow way. */
const PORT_SPACE = 65536;
const WORDS = PORT_SPACE / 32;
const FULL = 0xffffffff;

/** One allocation's hold on a port, with what orders it among the node's holders (AddAllocs' order). */
type Holder = { alloc: string; createIndex: number; position: number; ignoreCollision: boolean };

/** A node's own reserved ports on one address: the set, and the same as bits for the fast scan. */
export type ReservedPorts = { set: ReadonlySet<number>; bits: Uint32Array };

export function reservedPortsOf(set: ReadonlySet<number>): ReservedPorts {
  const bits = new Uint32Array(WORDS);
  for (const p of set) if (inPortSpace(p)) bits[p >>> 5]! |= 1 << (p & 31);
  return { set, bits };
}

/**
 * The holders of one port on one IP. What the collision check needs is kept as they come and go (how many
 * do not ignore collisions, which comes first), so N allocations sharing a port cost O(1) each, not O(N).
 */
class PortHolders {
  /** By `<alloc ID> <position in its ports>`. */
  private readonly byKey = new Map<string, Holder>();
  /** Holders that do not ignore collisions. */
  strict = 0;
  /** The first in AddAllocs' order; undefined when it left (found again when next asked). */
  private earliest: Holder | undefined;

  get size(): number {
    return this.byKey.size;
  }

  add(holder: Holder): void {
    this.byKey.set(holderKey(holder.alloc, holder.position), holder);
    if (!holder.ignoreCollision) this.strict++;
    if (this.earliest && before(holder, this.earliest)) this.earliest = holder;
  }

  remove(alloc: string, position: number): void {
    const key = holderKey(alloc, position);
    const holder = this.byKey.get(key);
    if (!holder) return;
    this.byKey.delete(key);
    if (!holder.ignoreCollision) this.strict--;
    if (holder === this.earliest) this.earliest = undefined;
  }

  first(): Holder {
    if (!this.earliest) for (const holder of this.byKey.values()) if (!this.earliest || before(holder, this.earliest)) this.earliest = holder;
    return this.earliest!;
  }

  /**
   * AddAllocs adds the holders in order: each after the first that does not ignore collisions collides.
   * With two such holders one is not first; with one, it collides unless it is the first.
   */
  collide(): boolean {
    return this.strict >= 2 || (this.strict === 1 && this.size > 1 && this.first().ignoreCollision);
  }
}

function holderKey(alloc: string, position: number): string {
  return `${alloc} ${position}`;
}

/** The ports held on one host IP of a node. */
class AddressPorts {
  readonly holders = new Map<number, PortHolders>();
  /** Bit p: some allocation holds port p. */
  readonly bits = new Uint32Array(WORDS);
  /** Bit w: every port of word w is held, so the scan for a free port skips it. */
  readonly fullWords = new Uint32Array(WORDS / 32);

  /** Adds the hold; returns the port's holders. */
  add(value: number, holder: Holder): PortHolders {
    let holders = this.holders.get(value);
    if (!holders) this.holders.set(value, (holders = new PortHolders()));
    holders.add(holder);
    if (inPortSpace(value)) {
      const w = value >>> 5;
      this.bits[w]! |= 1 << (value & 31);
      if (this.bits[w] === FULL) this.fullWords[w >>> 5]! |= 1 << (w & 31);
    }
    return holders;
  }

  /** Drops the allocation's hold at `position` of its ports on `value`; returns the port's holders left, if any. */
  remove(value: number, alloc: string, position: number): PortHolders | undefined {
    const holders = this.holders.get(value);
    if (!holders) return undefined;
    holders.remove(alloc, position);
    if (holders.size > 0) return holders;
    this.holders.delete(value);
    if (inPortSpace(value)) {
      const w = value >>> 5;
      this.bits[w]! &= ~(1 << (value & 31));
      this.fullWords[w >>> 5]! &= ~(1 << (w & 31));
    }
    return undefined;
  }

  /** The first word at or after `from` (up to `last`) with a port not held, or undefined. */
  nextOpenWord(from: number, last: number): number | undefined {
    for (let s = from >>> 5; s <= last >>> 5; s++) {
      // Open words of this summary word, those below `from` masked off.
      let open = ~this.fullWords[s]! >>> 0;
      if (s === from >>> 5) open &= (FULL << (from & 31)) >>> 0;
      if (open === 0) continue;
      const w = s * 32 + (31 - Math.clz32(open & -open));
      return w <= last ? w : undefined;
    }
    return undefined;
  }
}

const NO_PORTS = new AddressPorts();

function inPortSpace(value: number): boolean {
  return Number.isInteger(value) && value >= 0 && value < PORT_SPACE;
}

/** What a placement asks of a node's held ports. */
export class NodePorts {
  readonly byAddress = new Map<string, AddressPorts>();
  /** Ports (IP → values) held more than once with a holder that does not ignore collisions: where AddAllocs may find one. */
  readonly crowded = new Map<string, Set<number>>();

  /** Whether a live allocation holds `port` on `ip`. */
  holds(ip: string, port: number): boolean {
    return this.byAddress.get(ip)?.holders.has(port) ?? false;
  }

  /**
   * AddAllocs' check: adding the node's allocations' ports in creation order (each allocation's in its order)
   * to a set that starts as the node's reserved ports, a port already there that does not ignore collisions is
   * a collision. Reads only the ports held twice and the reserved ones, never every held port of the node.
   */
  collides(reservedAt: (ip: string) => ReservedPorts | undefined): boolean {
    for (const [ip, ports] of this.byAddress) {
      const reserved = reservedAt(ip);
      if (!reserved || reserved.set.size === 0) continue;
      // A reserved port held by a holder that does not ignore collisions collides, wherever that holder comes.
      const strict = (value: number) => (ports.holders.get(value)?.strict ?? 0) > 0;
      const fewer = Math.min(reserved.set.size, ports.holders.size);
      if (fewer <= WORDS) {
        if (reserved.set.size <= ports.holders.size) {
          for (const value of reserved.set) if (strict(value)) return true;
        } else {
          for (const value of ports.holders.keys()) if (reserved.set.has(value) && strict(value)) return true;
        }
      } else if (reservedHeld(ports, reserved, strict)) {
        return true; // many reserved and many held: the two bitmaps met word by word, a bounded 2,048 words
      }
    }
    for (const [ip, values] of this.crowded) {
      const ports = this.byAddress.get(ip)!;
      for (const value of values) if (ports.holders.get(value)!.collide()) return true;
    }
    return false;
  }

  /**
   * The lowest port of [min, max] not held on `ip`, not reserved there and not `skip`ped; undefined when
   * none is. Whole words of held (or reserved) ports are passed over, so the answer costs O(range / 32) at
   * worst, never O(held ports). A range outside 0–65535 (or not whole numbers) is walked port by port.
   */
  lowestFree(ip: string, min: number, max: number, reserved: ReservedPorts | undefined, skip: (port: number) => boolean): number | undefined {
    const ports = this.byAddress.get(ip) ?? NO_PORTS;
    if (!Number.isInteger(min) || !Number.isInteger(max) || min < 0 || max >= PORT_SPACE) {
      for (let p = min; p <= max; p++) if (!ports.holders.has(p) && !reserved?.set.has(p) && !skip(p)) return p;
      return undefined;
    }
    const last = max >>> 5;
    for (let w = ports.nextOpenWord(min >>> 5, last); w !== undefined; w = w < last ? ports.nextOpenWord(w + 1, last) : undefined) {
      const taken = (ports.bits[w]! | (reserved?.bits[w] ?? 0)) >>> 0;
      if (taken === FULL) continue;
      for (let p = Math.max(min, w * 32); p <= Math.min(max, w * 32 + 31); p++) {
        if (((taken >>> (p & 31)) & 1) === 0 && !skip(p)) return p;
      }
    }
    return undefined;
  }

  add(alloc: PortHoldingAlloc): void {
    const ports = alloc.SharedPorts ?? [];
    for (let position = 0; position < ports.length; position++) {
      const { ip, value, ignoreCollision } = portOf(ports[position]!);
      let address = this.byAddress.get(ip);
      if (!address) this.byAddress.set(ip, (address = new AddressPorts()));
      this.markCrowded(ip, value, address.add(value, { alloc: alloc.ID, createIndex: alloc.CreateIndex, position, ignoreCollision }));
    }
  }

  remove(alloc: PortHoldingAlloc): void {
    const ports = alloc.SharedPorts ?? [];
    for (let position = 0; position < ports.length; position++) {
      const { ip, value } = portOf(ports[position]!);
      const address = this.byAddress.get(ip);
      if (!address) continue;
      this.markCrowded(ip, value, address.remove(value, alloc.ID, position));
      if (address.holders.size === 0) this.byAddress.delete(ip);
    }
  }

  get empty(): boolean {
    return this.byAddress.size === 0;
  }

  private markCrowded(ip: string, value: number, holders: PortHolders | undefined): void {
    const crowded = holders !== undefined && holders.size > 1 && holders.strict > 0;
    let values = this.crowded.get(ip);
    if (crowded) {
      if (!values) this.crowded.set(ip, (values = new Set()));
      values.add(value);
    } else if (values?.delete(value) && values.size === 0) {
      this.crowded.delete(ip);
    }
  }
}

/** Whether a port both reserved and held (by a holder `strict` says collides) exists, found word by word. */
function reservedHeld(ports: AddressPorts, reserved: ReservedPorts, strict: (value: number) => boolean): boolean {
  for (let w = 0; w < WORDS; w++) {
    let both = (ports.bits[w]! & reserved.bits[w]!) >>> 0;
    while (both !== 0) {
      const bit = 31 - Math.clz32(both & -both);
      if (strict(w * 32 + bit)) return true;
      both = (both & ~(1 << bit)) >>> 0;
    }
  }
  // Port 65536 (a reserved range may end there) has no bit.
  return reserved.set.has(PORT_SPACE) && strict(PORT_SPACE);
}

/** The order AddAllocs adds ports in: allocations by CreateIndex then ID (byCreateIndex), each's ports in order. */
function before(a: Holder, b: Holder): boolean {
  if (a.createIndex !== b.createIndex) return a.createIndex < b.createIndex;
  if (a.alloc !== b.alloc) return a.alloc < b.alloc;
  return a.position < b.position;
}

function portOf(port: Record<string, unknown>): { ip: string; value: number; ignoreCollision: boolean } {
  return { ip: String(port.HostIP ?? ""), value: Number(port.Value ?? 0), ignoreCollision: Boolean(port.IgnoreCollision) };
}

const NO_NODE_PORTS = new NodePorts();

/** Every node's held ports, derived from the allocations table. */
export class HeldPortIndex<Alloc extends PortHoldingAlloc & Row> {
  /** Node ID → its held ports; undefined until first used, and again after a restore (rebuilt from the rows). */
  private byNode: Map<string, NodePorts> | undefined;

  /** `holdsPorts`: whether an allocation's ports count (it is live: desired to run, pending or running). */
  constructor(
    private readonly allocs: Table<Alloc>,
    store: Pick<StoreView, "onRestore">,
    private readonly holdsPorts: (alloc: Alloc) => boolean,
  ) {
    allocs.watch((_id, row, previous) => {
      if (!this.byNode) return;
      const was = previous !== undefined && this.counts(previous);
      const is = row !== undefined && this.counts(row);
      // Most writes of a live allocation (pending → running, health) keep its ports as they were.
      if (was && is && previous.SharedPorts === row.SharedPorts && previous.NodeID === row.NodeID && previous.CreateIndex === row.CreateIndex) return;
      if (was) this.release(previous);
      if (is) this.take(row);
    });
    store.onRestore(() => (this.byNode = undefined));
  }

  /** The node's held ports (read-only: the index changes them as allocations change). */
  onNode(nodeId: string): NodePorts {
    if (!this.byNode) {
      this.byNode = new Map();
      for (const alloc of this.allocs.values()) if (this.counts(alloc)) this.take(alloc);
    }
    return this.byNode.get(nodeId) ?? NO_NODE_PORTS;
  }

  private counts(alloc: Alloc): boolean {
    return (alloc.SharedPorts?.length ?? 0) > 0 && this.holdsPorts(alloc);
  }

  private take(alloc: Alloc): void {
    let node = this.byNode!.get(alloc.NodeID);
    if (!node) this.byNode!.set(alloc.NodeID, (node = new NodePorts()));
    node.add(alloc);
  }

  private release(alloc: Alloc): void {
    const node = this.byNode!.get(alloc.NodeID);
    if (!node) return;
    node.remove(alloc);
    if (node.empty) this.byNode!.delete(alloc.NodeID);
  }
}
