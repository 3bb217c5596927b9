/**
 * Node networks and group-network port placement, after Nomad's
 * `structs.NetworkIndex` (SetNode, AddAllocs, AssignPorts) and the network
 * part of `scheduler/rank.go`'s bin packing.
 *
 * Nodes carry what a client fingerprints: `NodeNetworks` (interfaces with
 * aliased addresses, each with its own reserved ports), the task `Networks`
 * derived from them, the dynamic port range and the node-wide reserved host
 * ports. A group's first network ask is placed on a node by taking each static
 * port on the first address of its host network and each dynamic port from
 * the range.
 *
 * Dynamic ports: Nomad picks them at random (20 random probes, then a scan).
 * standin takes the lowest free port of the range instead, so a placement
 * never draws from the seeded generator and the same requests give the same
 * ports whatever else happened before.
 */
import { omitEmpty } from "./encode.js";
import { type NodePorts, type ReservedPorts, reservedPortsOf } from "./held-ports.js";
import type { Json, NodeRow } from "./model.js";

export const DEFAULT_MIN_DYNAMIC_PORT = 20000;
export const DEFAULT_MAX_DYNAMIC_PORT = 32000;
/** Nomad's MaxValidPort: a port must be below it. */
const MAX_VALID_PORT = 65536;
/** Loopback's link speed cannot be detected: the fingerprint's defaultNetworkSpeed. */
const DEFAULT_SPEED = 1000;

/** The network fields a node row keeps (rendered in NodeResources / ReservedResources). */
export type NodeNetworkFields = {
  NodeNetworks: Json[];
  TaskNetworks: Json[];
  MinDynamicPort: number;
  MaxDynamicPort: number;
  ReservedHostPorts: string;
};

/** What a fixture may say about a node's networks (Nomad's own field names). */
export type NodeNetworkFixture = {
  NodeResources?: { NodeNetworks?: Json[]; MinDynamicPort?: number; MaxDynamicPort?: number } | undefined;
  ReservedResources?: { Networks?: { ReservedHostPorts?: string } } | undefined;
};

/**
 * A node's networks: the fixture's NodeNetworks, or what a client bound to
 * `address` fingerprints (a `-dev` agent on 127.0.0.1 gets `lo` with
 * 127.0.0.1 and ::1 under the alias `default`; another address, `eth0`).
 */
export function nodeNetworkFields(address: string, fixture: NodeNetworkFixture): NodeNetworkFields {
  const given = fixture.NodeResources?.NodeNetworks;
  const nodeNetworks = given && given.length > 0 ? given.map(normalizeNodeNetwork) : fingerprinted(address);
  return {
    NodeNetworks: nodeNetworks,
    TaskNetworks: taskNetworksOf(nodeNetworks),
    MinDynamicPort: fixture.NodeResources?.MinDynamicPort || DEFAULT_MIN_DYNAMIC_PORT,
    MaxDynamicPort: fixture.NodeResources?.MaxDynamicPort || DEFAULT_MAX_DYNAMIC_PORT,
    ReservedHostPorts: fixture.ReservedResources?.Networks?.ReservedHostPorts ?? "",
  };
}

/** Rows stored before nodes had networks get the dev agent's. */
export function networksOf(node: NodeRow): NodeNetworkFields {
  const stored = node as NodeRow & Partial<NodeNetworkFields>;
  if (stored.NodeNetworks) return stored as NodeNetworkFields;
  return nodeNetworkFields(node.HTTPAddr.split(":")[0] ?? "127.0.0.1", {});
}

function fingerprinted(address: string): Json[] {
  const loopback = address === "127.0.0.1" || address === "" || address === "localhost";
  const addresses = loopback ? [nodeAddress("127.0.0.1", "ipv4"), nodeAddress("::1", "ipv6")] : [nodeAddress(address, address.includes(":") ? "ipv6" : "ipv4")];
  return [{ Addresses: addresses, Device: loopback ? "lo" : "eth0", MacAddress: "", Mode: "host", Speed: DEFAULT_SPEED }];
}

function nodeAddress(address: string, family: string): Json {
  return { Address: address, Alias: "default", Family: family, Gateway: "", ReservedPorts: "" };
}

/** NodeNetworkResource has no omitempty: every field is written, defaults filled in. */
function normalizeNodeNetwork(n: Json): Json {
  const addresses = Array.isArray(n.Addresses) ? (n.Addresses as Json[]) : [];
  return {
    Addresses: addresses.map((a) => {
      const address = String(a.Address ?? "");
      return {
        Address: address,
        Alias: String(a.Alias ?? "default"),
        Family: String(a.Family ?? (address.includes(":") ? "ipv6" : "ipv4")),
        Gateway: String(a.Gateway ?? ""),
        ReservedPorts: String(a.ReservedPorts ?? ""),
      };
    }),
    Device: String(n.Device ?? ""),
    MacAddress: String(n.MacAddress ?? ""),
    Mode: String(n.Mode ?? "host"),
    Speed: Number(n.Speed ?? DEFAULT_SPEED),
  };
}

/** NodeResources.Networks: one NetworkResource per host-mode address (the network fingerprint's /32 or /128). */
function taskNetworksOf(nodeNetworks: Json[]): Json[] {
  const out: Json[] = [];
  for (const n of nodeNetworks) {
    if (n.Mode !== "host") continue;
    for (const a of n.Addresses as Json[]) {
      const ip = String(a.Address);
      out.push(omitEmpty({ CIDR: `${ip}/${ip.includes(":") ? 128 : 32}`, Device: n.Device, IP: ip, MBits: n.Speed, Mode: "host" }));
    }
  }
  return out;
}

/**
 * Nomad's ParsePortRanges: "22,80-90" → [22, 80, …, 90]; undefined when it
 * cannot be parsed (a bad number, a reversed range, a port past 65536).
 */
export function parsePortRanges(spec: string): number[] | undefined {
  const ports = new Set<number>();
  for (const part of spec.split(",")) {
    const piece = part.trim();
    if (piece === "") continue;
    const range = /^(\d+)(?:-(\d+))?$/.exec(piece);
    if (!range) return undefined;
    const low = Number(range[1]);
    const high = range[2] === undefined ? low : Number(range[2]);
    if (high < low || high > MAX_VALID_PORT) return undefined;
    for (let p = low; p <= high; p++) ports.add(p);
  }
  return [...ports].sort((a, b) => a - b);
}

/** The ports a placed group network holds, and the network it reports. */
export type PortOffer = { ports: Json[]; networks: Json[] };

/** SetNode's half of the NetworkIndex: what a node row says about its ports, the same for every placement on it. */
type PortLayout = {
  nets: NodeNetworkFields;
  /** Host network alias → its addresses, in the order the node lists them. */
  hostNetworks: Map<string, Json[]>;
  /** IP → the ports reserved there (node-wide, plus the address's own). */
  reserved: Map<string, ReservedPorts>;
};

/** Node rows are frozen and replaced when they change: a row's layout is worked out once (undefined: an invalid node). */
const layouts = new WeakMap<NodeRow, PortLayout | undefined>();

function portLayoutOf(node: NodeRow): PortLayout | undefined {
  if (layouts.has(node)) return layouts.get(node);
  const layout = buildPortLayout(node);
  layouts.set(node, layout);
  return layout;
}

function buildPortLayout(node: NodeRow): PortLayout | undefined {
  const nets = networksOf(node);
  // SetNode: node-wide reserved ports on every address, plus each address's own.
  const global = parsePortRanges(nets.ReservedHostPorts);
  if (!global) return undefined;
  const hostNetworks = new Map<string, Json[]>();
  const reservedSets = new Map<string, Set<number>>();
  for (const n of nets.NodeNetworks) {
    for (const a of n.Addresses as Json[]) {
      const alias = String(a.Alias);
      hostNetworks.set(alias, [...(hostNetworks.get(alias) ?? []), a]);
      const ip = String(a.Address);
      const set = reservedSets.get(ip) ?? reservedSets.set(ip, new Set()).get(ip)!;
      for (const p of global) set.add(p);
      const own = parsePortRanges(String(a.ReservedPorts ?? ""));
      if (!own) return undefined;
      for (const p of own) set.add(p);
    }
  }
  const reserved = new Map<string, ReservedPorts>();
  for (const [ip, set] of reservedSets) reserved.set(ip, reservedPortsOf(set));
  return { nets, hostNetworks, reserved };
}

/**
 * Places a group's network ask on a node, given the ports the node's live
 * allocations hold. Returns the offer (none when the group asks no network),
 * or the dimension Nomad's bin packing exhausts the node with.
 */
export function assignGroupPorts(node: NodeRow, groupNetworks: Json[] | null | undefined, held: NodePorts): { offer: PortOffer | undefined } | { dimension: string } {
  const fit = fitGroupPorts(node, groupNetworks, held);
  if ("dimension" in fit) return fit;
  if (!fit.ask) return { offer: undefined };
  const offer = fit.picks.map((p) => mapping(p.label, p.value, p.to, p.ip, p.ignoreCollision));
  return { offer: { ports: offer, networks: [networkResource(fit.ask, offer, portLayoutOf(node)!.nets.NodeNetworks)] } };
}

/**
 * Why the group's network ask does not fit on the node (the dimension), or undefined when it does: what
 * assignGroupPorts decides, without building the offer. A placement asks this of every candidate node.
 */
export function portDimension(node: NodeRow, groupNetworks: Json[] | null | undefined, held: NodePorts): string | undefined {
  const fit = fitGroupPorts(node, groupNetworks, held);
  return "dimension" in fit ? fit.dimension : undefined;
}

/** A port the ask gets: AllocatedPortMapping's fields. */
type PortPick = { label: string; value: number; to: number; ip: string; ignoreCollision: boolean };

function fitGroupPorts(node: NodeRow, groupNetworks: Json[] | null | undefined, held: NodePorts): { ask: Json | undefined; picks: PortPick[] } | { dimension: string } {
  const layout = portLayoutOf(node);
  if (!layout) return { dimension: "network: invalid node" };
  const { nets, hostNetworks } = layout;
  const reservedAt = (ip: string) => layout.reserved.get(ip);
  // AddAllocs: the node's allocations cannot already collide with each other or the reserved ports.
  if (held.collides(reservedAt)) return { dimension: "network: port collision" };

  const ask = groupNetworks?.[0];
  if (!ask) return { ask: undefined, picks: [] };
  const reserved = (ask.ReservedPorts as Json[] | undefined) ?? [];
  const dynamic = (ask.DynamicPorts as Json[] | undefined) ?? [];
  const picks: PortPick[] = [];
  const inOffer = new Set<number>();

  for (const port of reserved) {
    const label = String(port.Label ?? "");
    const value = Number(port.Value ?? 0);
    const addresses = hostNetworks.get(hostNetworkOf(port)) ?? [];
    const address = addresses[0];
    if (!address) return { dimension: `network: no addresses available for ${hostNetworkOf(port)} network` };
    if (value < 0 || value >= MAX_VALID_PORT) return { dimension: `network: invalid port ${value} (out of range)` };
    // Nomad checks the first address only: a port in use there is a collision, whatever the other addresses hold.
    const ip = String(address.Address);
    const inUse = reservedAt(ip)?.set.has(value) || held.holds(ip, value);
    if (inUse && !port.IgnoreCollision) return { dimension: `network: reserved port collision ${label}=${value}` };
    picks.push({ label, value, to: Number(port.To ?? 0), ip, ignoreCollision: Boolean(port.IgnoreCollision) });
    inOffer.add(value);
  }

  const reservedValues = new Set(reserved.map((p) => Number(p.Value ?? 0)));
  const takenByAsk = (p: number) => inOffer.has(p) || reservedValues.has(p);
  for (const port of dynamic) {
    const label = String(port.Label ?? "");
    let placed: PortPick | undefined;
    for (const address of hostNetworks.get(hostNetworkOf(port)) ?? []) {
      const ip = String(address.Address);
      const value = held.lowestFree(ip, nets.MinDynamicPort, nets.MaxDynamicPort, reservedAt(ip), takenByAsk);
      if (value === undefined) continue;
      const to = Number(port.To ?? 0);
      placed = { label, value, to: to === -1 ? value : to, ip, ignoreCollision: false };
      break;
    }
    if (!placed)
      return {
        dimension:
          (hostNetworks.get(hostNetworkOf(port)) ?? []).length === 0
            ? `network: no addresses available for ${hostNetworkOf(port)} network`
            : "network: dynamic port selection failed",
      };
    picks.push(placed);
    inOffer.add(placed.value);
  }
  return { ask, picks };
}

function hostNetworkOf(port: Json): string {
  return String(port.HostNetwork || "default");
}

/** AllocatedPortMapping (struct-level omitempty: To, HostIP… only when set). */
function mapping(label: string, value: number, to: number, hostIP: string, ignoreCollision: boolean): Json {
  return omitEmpty({ HostIP: hostIP, IgnoreCollision: ignoreCollision, Label: label, To: to, Value: value });
}

/**
 * AllocatedPortsToNetworkResouce: the ask with the dynamic ports' values and
 * `to` filled in, and IP the first host-mode node network's first address.
 */
function networkResource(ask: Json, offer: Json[], nodeNetworks: Json[]): Json {
  const byLabel = new Map(offer.map((p) => [String(p.Label), p]));
  const dynamic = ((ask.DynamicPorts as Json[] | undefined) ?? []).map((p) => {
    const got = byLabel.get(String(p.Label ?? ""));
    return omitEmpty({ ...p, Value: got?.Value ?? p.Value, To: got?.To ?? p.To });
  });
  const host = nodeNetworks.find((n) => n.Mode === "host");
  const ip = (host?.Addresses as Json[] | undefined)?.[0]?.Address;
  return omitEmpty({ ...ask, DynamicPorts: dynamic, IP: ip ?? ask.IP });
}
