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
import type { StoreView, Table } from "../core/store.js";
import type { AllocRow, Json } from "./model.js";

/** Ports 0–65535 have a bit each; a port outside (never placed) is still held, only found the slow way. */
const PORT_SPACE = 65536;
const WORDS = PORT_SPACE / 32;
const FULL = 0xffffffff;

/** One allocation's hold on a port, with what orders it among the node's holders (AddAllocs' order). */
type Holder = { alloc: string; createIndex: number; position: number; ignoreCollision: boolean };

/** A node's own reserved ports on one address: the set, and the same as bits for the fast scan. */
export type ReservedPorts = { set: ReadonlySet<number>; bits: Uint32Array };

/** The ports held on one host IP of a node. */
class AddressPorts {
  readonly holders = new Map<number, Holder[]>();
  /** Bit p: some allocation holds port p. */
  readonly bits = new Uint32Array(WORDS);
  /** Bit w: every port of word w is held, so the scan for a free port skips it. */
  readonly fullWords = new Uint32Array(WORDS / 32);

  add(value: number, holder: Holder): void {
    const holders = this.holders.get(value);
    if (holders) holders.push(holder);
    else this.holders.set(value, [holder]);
    if (!inPortSpace(value)) return;
    const w = value >>> 5;
    this.bits[w]! |= 1 << (value & 31);
    if (this.bits[w] === FULL) this.fullWords[w >>> 5]! |= 1 << (w & 31);
  }

  /** Drops the allocation's holds on `value`; returns how many holders are left there. */
  remove(value: number, alloc: string): number {
    const holders = this.holders.get(value);
    if (!holders) return 0;
    const left = holders.filter((h) => h.alloc !== alloc);
    if (left.length > 0) {
      this.holders.set(value, left);
      return left.length;
    }
    this.holders.delete(value);
    if (inPortSpace(value)) {
      const w = value >>> 5;
      this.bits[w]! &= ~(1 << (value & 31));
      this.fullWords[w >>> 5]! &= ~(1 << (w & 31));
    }
    return 0;
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
      const strict = (value: number) => ports.holders.get(value)?.some((h) => !h.ignoreCollision) ?? false;
      const fewer = Math.min(reserved.set.size, ports.holders.size);
      if (fewer <= WORDS) {
        if (reserved.set.size <= ports.holders.size) {
          for (const value of reserved.set) if (strict(value)) return true;
        } else {
          for (const value of ports.holders.keys()) if (reserved.set.has(value) && strict(value)) return true;
        }
      } else if (reservedHeld(ports, reserved, strict)) {
        // Many reserved ports and many held: the two bitmaps' words met, a bounded 2,048 of them.
        return true;
      }
    }
    for (const [ip, values] of this.crowded) {
      const ports = this.byAddress.get(ip)!;
      // Held twice: every holder after the first that does not ignore collisions collides.
      for (const value of values) {
        const holders = ports.holders.get(value)!;
        const first = holders.reduce((a, b) => (before(b, a) ? b : a));
        if (holders.some((h) => h !== first && !h.ignoreCollision)) return true;
      }
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

  add(alloc: AllocRow): void {
    const ports = alloc.SharedPorts ?? [];
    for (let position = 0; position < ports.length; position++) {
      const { ip, value, ignoreCollision } = portOf(ports[position]!);
      let address = this.byAddress.get(ip);
      if (!address) this.byAddress.set(ip, (address = new AddressPorts()));
      address.add(value, { alloc: alloc.ID, createIndex: alloc.CreateIndex, position, ignoreCollision });
      this.markCrowded(ip, value, address.holders.get(value)!);
    }
  }

  remove(alloc: AllocRow): void {
    for (const port of alloc.SharedPorts ?? []) {
      const { ip, value } = portOf(port);
      const address = this.byAddress.get(ip);
      if (!address) continue;
      address.remove(value, alloc.ID);
      this.markCrowded(ip, value, address.holders.get(value) ?? []);
      if (address.holders.size === 0) this.byAddress.delete(ip);
    }
  }

  get empty(): boolean {
    return this.byAddress.size === 0;
  }

  private markCrowded(ip: string, value: number, holders: readonly Holder[]): void {
    const crowded = holders.length > 1 && holders.some((h) => !h.ignoreCollision);
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

function portOf(port: Json): { ip: string; value: number; ignoreCollision: boolean } {
  return { ip: String(port.HostIP ?? ""), value: Number(port.Value ?? 0), ignoreCollision: Boolean(port.IgnoreCollision) };
}

const NO_NODE_PORTS = new NodePorts();

/** Every node's held ports, derived from the allocations table. */
export class HeldPortIndex {
  /** Node ID → its held ports; undefined until first used, and again after a restore (rebuilt from the rows). */
  private byNode: Map<string, NodePorts> | undefined;

  /** `holdsPorts`: whether an allocation's ports count (it is live: desired to run, pending or running). */
  constructor(
    private readonly allocs: Table<AllocRow>,
    store: Pick<StoreView, "onRestore">,
    private readonly holdsPorts: (alloc: AllocRow) => boolean,
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

  private counts(alloc: AllocRow): boolean {
    return (alloc.SharedPorts?.length ?? 0) > 0 && this.holdsPorts(alloc);
  }

  private take(alloc: AllocRow): void {
    let node = this.byNode!.get(alloc.NodeID);
    if (!node) this.byNode!.set(alloc.NodeID, (node = new NodePorts()));
    node.add(alloc);
  }

  private release(alloc: AllocRow): void {
    const node = this.byNode!.get(alloc.NodeID);
    if (!node) return;
    node.remove(alloc);
    if (node.empty) this.byNode!.delete(alloc.NodeID);
  }
}
