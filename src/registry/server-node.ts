/**
 * What a real Consul server puts in the catalog about itself, which every
 * client of a real cluster sees: its node carries the tagged addresses every
 * agent sets on its node (`lan`, `lan_ipv4`, `wan`, `wan_ipv4`, all its advertise
 * address when none is configured) and the node meta the agent and the
 * leader add (`consul-network-segment`, empty outside Enterprise segments,
 * and `consul-version`); and the leader registers the server's own `consul`
 * service on it (Consul's V1ConsulRegistrator.HandleAliveMember): ID and name
 * `consul`, the server RPC port, weights 1/1 and meta drawn from the serf
 * member (the same values `/v1/agent/self` reports as `Member`).
 */
import { CONSUL_VERSION } from "../core/versions.js";
import type { NodeRow, ServiceRow } from "./state.js";

/** The server RPC port of a default agent (its `consul` service's port; serf's are agent.ts's). */
export const SERVER_PORT = 8300;

/** structs.ConsulServiceID and structs.ConsulServiceName. */
export const CONSUL_SERVICE_ID = "consul";

/** serf's protocol range and the raft protocol the member advertises (its `vsn`, `raft_vsn` tags). */
const SERF_PROTOCOL = { current: 2, min: 1, max: 5 } as const;
const RAFT_VERSION = 3;

/** structs.MetaSegmentKey and structs.MetaConsulVersion. */
export const SEGMENT_META_KEY = "consul-network-segment";
export const VERSION_META_KEY = "consul-version";

/** An agent's node's tagged addresses and meta (any agent's, server or client), keys in Go's map order (sorted). */
export function agentNodeIdentity(address: string): Pick<NodeRow, "TaggedAddresses" | "Meta"> {
  return {
    TaggedAddresses: { lan: address, lan_ipv4: address, wan: address, wan_ipv4: address },
    Meta: { [SEGMENT_META_KEY]: "", [VERSION_META_KEY]: CONSUL_VERSION },
  };
}

/** The server's own `consul` service on `node` (no `grpc_port` meta: the member advertises no external gRPC port). */
export function consulServerService(node: string): Omit<ServiceRow, "CreateIndex" | "ModifyIndex"> {
  return {
    Node: node,
    Kind: "",
    ID: CONSUL_SERVICE_ID,
    Service: CONSUL_SERVICE_ID,
    Tags: [],
    Address: "",
    TaggedAddresses: null,
    Meta: {
      non_voter: "false",
      raft_version: String(RAFT_VERSION),
      read_replica: "false",
      serf_protocol_current: String(SERF_PROTOCOL.current),
      serf_protocol_max: String(SERF_PROTOCOL.max),
      serf_protocol_min: String(SERF_PROTOCOL.min),
      version: CONSUL_VERSION,
    },
    Port: SERVER_PORT,
    SocketPath: "",
    Weights: { Passing: 1, Warning: 1 },
    EnableTagOverride: false,
  };
}
