/**
 * The `stats` of Nomad's `GET /v1/agent/self`: what a server agent's
 * Agent.Stats returns, Server.Stats of Nomad 1.9 (nomad/server.go) — the
 * `nomad` section, hashicorp/raft's and serf's Stats, the Go runtime's and
 * the legacy Vault client's — every value a string (the api decodes
 * `map[string]map[string]string`). standin's agent is a server only (its
 * nodes are simulated clients), so there is no `client` section, as on a
 * real server-only agent.
 *
 * The values are a single-server cluster's that has led since it started:
 * the raft indexes are the state's index, the serf pool holds one server per
 * region. What a real process measures (goroutines, CPUs) is a fixed value,
 * so the answer stays the same from one run to the next.
 */

/** What the stats are computed from. */
export interface AgentStatsInput {
  /** The state's raft index. */
  index: number;
  /** The servers of the federation (one per region), this one included. */
  servers: number;
  /** Whether a leader is known (always, but while a test partitions it). */
  leaderKnown: boolean;
  /** This server's raft ID. */
  serverId: string;
}

/** The term a server that bootstrapped itself leads in (it wins the first election after the bootstrap term). */
const LEADER_TERM = "2";

/** The Go release Nomad 1.9.7's binaries were built with (UNVERIFIED: read from the release date, not its .go-version). */
const GO_VERSION = "go1.24.1";

export function agentStats(input: AgentStatsInput): Record<string, Record<string, string>> {
  const index = String(input.index);
  const leaderAddr = input.leaderKnown ? "127.0.0.1:4647" : "";
  return {
    nomad: {
      bootstrap: "true",
      known_regions: String(input.servers),
      leader: String(input.leaderKnown),
      leader_addr: leaderAddr,
      server: "true",
    },
    raft: {
      applied_index: index,
      commit_index: index,
      fsm_pending: "0",
      last_contact: "0",
      last_log_index: index,
      last_log_term: LEADER_TERM,
      last_snapshot_index: "0",
      last_snapshot_term: "0",
      latest_configuration: `[{Suffrage:Voter ID:${input.serverId} Address:127.0.0.1:4647}]`,
      latest_configuration_index: "0",
      num_peers: "0",
      protocol_version: "3",
      protocol_version_max: "3",
      protocol_version_min: "0",
      snapshot_version_max: "1",
      snapshot_version_min: "0",
      state: input.leaderKnown ? "Leader" : "Follower",
      term: LEADER_TERM,
    },
    runtime: {
      arch: "amd64",
      cpu_count: "2",
      goroutines: "0",
      "kernel.name": "linux",
      max_procs: "2",
      version: GO_VERSION,
    },
    serf: {
      coordinate_resets: "0",
      encrypted: "false",
      event_queue: "0",
      event_time: "1",
      failed: "0",
      health_score: "0",
      intent_queue: "0",
      left: "0",
      member_time: "1",
      members: String(input.servers),
      query_queue: "0",
      query_time: "1",
    },
    // The legacy (token) Vault client's, unconfigured.
    vault: {
      token_expire_time: "",
      token_last_renewal_time: "",
      token_next_renewal_time: "",
      token_ttl: "0s",
      tracked_for_revoked: "0",
    },
  };
}
