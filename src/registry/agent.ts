/**
 * The agent endpoints clients call before anything else: `/v1/status/peers`,
 * `/v1/agent/self` and `/v1/agent/members` (Consul's agent/status_endpoint.go
 * and agent/agent_endpoint.go `AgentSelf`, `AgentMembers`). The registry is
 * one server agent per datacenter, on loopback, so every value here follows
 * from the fixture: the node's name, ID and address, the datacenter, ACLs on
 * or off. Agent endpoints answer without query meta (they are agent-local).
 */
import { badRequest, type RequestContext, type Router } from "./http.js";
import type { RegistryApi } from "./api.js";
import type { AgentLocal } from "./agent-local.js";
import { CONSUL_VERSION } from "../core/versions.js";
import { SERVER_PORT } from "./server-node.js";
/** The serf LAN and serf WAN ports of a default agent (the server RPC port is server-node.ts's). */
const SERF_LAN_PORT = 8301;
const SERF_WAN_PORT = 8302;
/** serf.StatusAlive. */
const MEMBER_ALIVE = 1;

export function registerAgentRoutes(router: Router, api: RegistryApi, datacenters: () => readonly string[], local: AgentLocal): void {
  const { state } = api;

  const agent = () => {
    const config = api.config();
    const node = state.findNode(config.agentNode);
    return { config, name: config.agentNode, id: node?.ID ?? "", address: node?.Address ?? "127.0.0.1", meta: node?.Meta ?? {} };
  };

  /** serf.Member as encoding/json writes it (Tags is a map: Go sorts its keys). */
  const member = (wan: boolean) => {
    const self = agent();
    const tags: Record<string, string> = {
      acls: self.config.acl.enabled ? "1" : "0",
      bootstrap: "1",
      build: `${CONSUL_VERSION}:standin`,
      dc: self.config.datacenter,
      ft_fs: "1",
      ft_si: "1",
      id: self.id,
      port: String(SERVER_PORT),
      raft_vsn: "3",
      role: "consul",
      segment: "",
      vsn: "2",
      vsn_max: "3",
      vsn_min: "2",
      wan_join_port: String(SERF_WAN_PORT),
    };
    if (wan) delete tags.segment;
    return {
      Name: wan ? `${self.name}.${self.config.datacenter}` : self.name,
      Addr: self.address,
      Port: wan ? SERF_WAN_PORT : SERF_LAN_PORT,
      Tags: tags,
      Status: MEMBER_ALIVE,
      ProtocolMin: 1,
      ProtocolMax: 5,
      ProtocolCur: 2,
      DelegateMin: 2,
      DelegateMax: 5,
      DelegateCur: 4,
    };
  };

  // The raft peers: this datacenter's one server (no index headers: the handler sets no meta).
  router.register("/v1/status/peers", ["GET"], (rc) => {
    rc.parse();
    return api.leader().known ? [`${agent().address}:${SERVER_PORT}`] : [];
  });

  router.register("/v1/agent/self", ["GET"], (rc: RequestContext) => {
    const self = agent();
    api.authorize(rc).require("agent", self.name, "read");
    const config = self.config;
    return {
      Config: {
        Datacenter: config.datacenter,
        PrimaryDatacenter: config.datacenter,
        NodeName: self.name,
        NodeID: self.id,
        Revision: "standin",
        Server: true,
        Version: CONSUL_VERSION,
        BuildDate: "2026-01-01T00:00:00Z",
      },
      // Consul's is the whole sanitised runtime configuration; these are the keys tools read.
      DebugConfig: {
        Datacenter: config.datacenter,
        NodeID: self.id,
        NodeName: self.name,
        PrimaryDatacenter: config.datacenter,
        ServerMode: true,
        Version: CONSUL_VERSION,
      },
      Coord: { Vec: [0, 0, 0, 0, 0, 0, 0, 0], Error: 1.5, Adjustment: 0, Height: 1e-5 },
      Member: member(false),
      Stats: {
        // The agent's own checks and services (not the node's catalog checks such as serfHealth).
        agent: { check_monitors: "0", check_ttls: String(local.ttlCount()), checks: String(local.agentChecks().length), services: String(local.services().length) },
        build: { prerelease: "", revision: "standin", version: CONSUL_VERSION, version_metadata: "" },
        consul: {
          acl: config.acl.enabled ? "enabled" : "disabled",
          bootstrap: "true",
          known_datacenters: String(new Set([config.datacenter, ...datacenters()]).size),
          leader: String(api.leader().known),
          leader_addr: api.leader().known ? `${self.address}:${SERVER_PORT}` : "",
          server: "true",
        },
      },
      // The agent's local metadata (its loadMetadata: the configured node meta and the segment); the
      // `consul-version` key the catalog's node carries is the leader's. UNVERIFIED for 1.21 by a live agent.
      Meta: { "consul-network-segment": "", ...withoutKey(self.meta, "consul-version") },
    };
  });

  router.register("/v1/agent/members", ["GET"], (rc: RequestContext) => {
    const wan = (rc.query.get("wan") ?? "") !== "";
    const segment = rc.query.get("segment") ?? "";
    if (wan && segment !== "" && segment !== "_all") throw badRequest("Cannot provide a segment with wan=true");
    const authz = api.authorize(rc);
    const self = member(wan);
    // filterMembers: a member is listed when its node may be read.
    return authz.allowed("node", agent().name, "read") ? [self] : [];
  });
}

function withoutKey(record: Readonly<Record<string, string>>, key: string): Record<string, string> {
  const { [key]: _dropped, ...rest } = record;
  return rest;
}
