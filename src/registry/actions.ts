/**
 * The registry's actions (health checks, sessions, KV) and conditions
 * (session gone or alive, a key's holder or value, a check's status, a
 * service there, gone or of a health), for fixture timelines,
 * `POST /_standin/actions` and `POST /_standin/await`.
 *
 * A check the agent registered (a service's check, say) is set the way a
 * TTL update sets it: its TTL restarts from now, and the agent's record of
 * when it turned critical (for DeregisterCriticalServiceAfter) follows.
 */
import * as v from "valibot";
import { ActionError, action, condition, type ActionTable, type ConditionTable } from "../http/actions.js";
import { checkRow } from "./catalog.js";
import type { AgentLocal } from "./agent-local.js";
import { aggregatedStatus } from "./agent-views.js";
import { sessionKey, type RegistryState } from "./state.js";

const CHECK_STATUSES = ["passing", "warning", "critical", "maintenance"] as const;

export function registryActions(state: RegistryState, agentNode: () => string, agent?: AgentLocal) {
  /** Sets a check's status, creating the check if needed; critical invalidates the sessions bound to it. */
  const setCheck = (args: { node?: string; check: string; status: (typeof CHECK_STATUSES)[number]; output?: string }) => {
    const nodeName = args.node ?? agentNode();
    const node = state.findNode(nodeName);
    if (!node) throw new ActionError(404, `no node "${nodeName}" in the registry's catalog`);
    const existing = state.findCheck(nodeName, args.check);
    const before = state.sessions.size;
    if (existing && agent && node.Node.toLowerCase() === agentNode().toLowerCase() && agent.findCheck(args.check)) {
      agent.setStatus(args.check, args.status, args.output ?? existing.Output);
      return { Node: node.Node, CheckID: args.check, Status: args.status, invalidatedSessions: before - state.sessions.size };
    }
    state.putCheck({ ...(existing ?? checkRow({ Node: node.Node, CheckID: args.check })), Status: args.status, Output: args.output ?? existing?.Output ?? "" });
    return { Node: node.Node, CheckID: args.check, Status: args.status, invalidatedSessions: before - state.sessions.size };
  };

  const checkArgs = { node: v.optional(v.string()), check: v.pipe(v.string(), v.nonEmpty()), output: v.optional(v.string()) };
  const actions: ActionTable = {
    "check-status": action({
      summary: "sets a health check's status (critical invalidates the sessions bound to it)",
      args: v.strictObject({ ...checkArgs, status: v.picklist(CHECK_STATUSES) }),
      run: (a) => setCheck(a),
    }),
    "check-critical": action({ summary: "a health check turns critical", args: v.strictObject(checkArgs), run: (a) => setCheck({ ...a, status: "critical" }) }),
    "check-passing": action({ summary: "a health check passes again", args: v.strictObject(checkArgs), run: (a) => setCheck({ ...a, status: "passing" }) }),
    "session-destroy": action({
      summary: "destroys a session (its locks are released or their keys deleted, per its Behavior)",
      args: v.strictObject({ session: v.string() }),
      run: (a) => {
        const session = state.findSession(a.session);
        if (!session) throw new ActionError(404, `no session "${a.session}"`);
        state.destroySession(session, "destroyed by a timeline or control action");
        return { destroyed: session.ID };
      },
    }),
    "kv-delete": action({
      summary: "deletes a key",
      args: v.strictObject({ key: v.string() }),
      run: (a) => ({ deleted: state.deleteKey(a.key) }),
    }),
  };

  const conditions: ConditionTable = {
    session: condition({
      summary: "a session exists, or (gone: true) no longer does",
      args: v.strictObject({ id: v.string(), gone: v.optional(v.boolean(), false) }),
      check: (a) => {
        const session = state.sessions.get(sessionKey(a.id));
        return { met: a.gone ? !session : Boolean(session), observed: session ? { ID: session.ID, Node: session.Node } : null };
      },
    }),
    kv: condition({
      summary: "a key is held (by any or a given session) or free, or has a value",
      args: v.strictObject({ key: v.string(), held: v.optional(v.boolean()), session: v.optional(v.string()), value: v.optional(v.string()), gone: v.optional(v.boolean()) }),
      check: (a) => {
        const entry = state.kv.get(a.key);
        const holder = entry?.Session as string | undefined;
        const value = entry?.Value == null ? "" : Buffer.from(entry.Value, "base64").toString();
        let met = a.gone ? !entry : entry !== undefined;
        if (a.held !== undefined) met &&= a.held ? holder !== undefined : holder === undefined;
        if (a.session !== undefined) met &&= holder !== undefined && sessionKey(holder) === sessionKey(a.session);
        if (a.value !== undefined) met &&= value === a.value;
        return { met, observed: entry ? { Session: holder ?? null, Value: value, LockIndex: entry.LockIndex } : null };
      },
    }),
    check: condition({
      summary: "a health check (a node's, or a service's on it) has a status, or (gone: true) no longer exists",
      args: v.strictObject({ node: v.optional(v.string()), check: v.string(), status: v.optional(v.picklist(CHECK_STATUSES)), gone: v.optional(v.boolean(), false) }),
      check: (a) => {
        const found = state.findCheck(a.node ?? agentNode(), a.check);
        const met = a.gone ? !found : found !== undefined && (a.status === undefined || found.Status === a.status);
        return { met, observed: found ? { Status: found.Status, Output: found.Output, ServiceID: found.ServiceID } : null };
      },
    }),
    service: condition({
      summary:
        "a service instance exists (by ID, on the agent's node unless named), or (gone: true) no longer does, or its health (its checks and its node's) is passing, warning or critical",
      args: v.strictObject({
        node: v.optional(v.string()),
        id: v.string(),
        gone: v.optional(v.boolean(), false),
        health: v.optional(v.picklist(["passing", "warning", "critical", "maintenance"])),
      }),
      check: (a) => {
        const node = a.node ?? agentNode();
        const found = state.findService(node, a.id);
        const health = found ? aggregatedStatus([...state.nodeChecksOf(node), ...state.checksOfService(node, found.ID)]) : undefined;
        const met = a.gone ? !found : found !== undefined && (a.health === undefined || health === a.health);
        return { met, observed: found ? { ID: found.ID, Service: found.Service, Node: found.Node, health } : null };
      },
    }),
  };

  return { actions, conditions, setCheck };
}
