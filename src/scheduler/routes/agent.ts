/** The agent's own endpoints: health, members (one server per region), self. */
import { NOMAD_VERSION } from "../../core/versions.js";
import { agentStats } from "./agent-stats.js";
import type { NomadRouter } from "../http/nomad-http.js";
import { only } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerAgentRoutes(router: NomadRouter, { settings, peers, ctx }: RouteKit): void {
  router.exact("/v1/agent/health", (rc) => {
    only(rc, "GET");
    return { client: { message: "ok", ok: true }, server: { message: "ok", ok: true } };
  });

  router.exact("/v1/agent/members", (rc) => {
    only(rc, "GET");
    const s = settings();
    // One server per region, as the WAN gossip pool lists them (sorted by name here, for determinism).
    const members = peers()
      .map((peer) => serverMember(peer))
      .sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
    return { Members: members, ServerDC: s.datacenter, ServerName: `${s.agentName}.${s.region}`, ServerRegion: s.region };
  });

  router.exact("/v1/agent/self", (rc) => {
    only(rc, "GET");
    const s = settings();
    const member = serverMember(s);
    return {
      config: {
        Datacenter: s.datacenter,
        NodeName: s.agentName,
        Region: s.region,
        Version: { Revision: "standin", Version: NOMAD_VERSION, VersionMetadata: "", VersionPrerelease: "" },
      },
      // The same serf member /v1/agent/members lists for this region (api.AgentMember: every key, the protocol ones too).
      member,
      // Agent.Stats of a server-only agent; its raft ID is the member's `id` tag.
      stats: agentStats({ index: ctx.store.index, servers: peers().length, leaderKnown: rc.leader.known, serverId: member.Tags.id }),
    };
  });
}

/** A server's serf member as Nomad's agent endpoints write it (the `build` tag is the version it runs). */
function serverMember(server: { agentName: string; region: string; datacenter: string }) {
  return {
    Addr: "127.0.0.1",
    DelegateCur: 4,
    DelegateMax: 5,
    DelegateMin: 2,
    Name: `${server.agentName}.${server.region}`,
    Port: 4648,
    ProtocolCur: 2,
    ProtocolMax: 5,
    ProtocolMin: 1,
    Status: "alive",
    Tags: {
      bootstrap: "1",
      build: NOMAD_VERSION,
      dc: server.datacenter,
      expect: "1",
      id: "",
      mvn: "1",
      port: "4647",
      raft_vsn: "3",
      region: server.region,
      role: "nomad",
      rpc_addr: "127.0.0.1",
      vsn: "1",
    },
  };
}
