/** Nodes: the list (`/v1/nodes`), one node and its allocations, and its writes (eligibility, drain, purge; with node operations). */
import { nodeFilterDatum } from "../state/filter-datum.js";
import { badRequest, boolParam, field, jsonBody, ReadError, typedField, Write, type NomadRouter } from "../http/nomad-http.js";
import { allocWire, nodeStub, TABLES, type NodeRow } from "../state/model.js";
import { nodeView } from "../nodes/node-view.js";
import { idTokenizer } from "./paging.js";
import { notYet, only, pick, rpc } from "./helpers.js";
import type { RouteKit } from "./kit.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";

export function registerNodeRoutes(router: NomadRouter, { state, nodeOps, read, objectIndex, readList }: RouteKit): void {
  router.exact("/v1/nodes", (rc) => {
    only(rc, "GET");
    // ?resources=true adds the node's NodeResources and ReservedResources to each stub (NodeStubFields.Resources).
    const resources = boolParam(rc.query, "resources");
    const stub = resources ? (n: NodeRow) => ({ ...nodeStub(n), ...pick(nodeView(n), "NodeResources", "ReservedResources") }) : nodeStub;
    return readList(
      rc,
      [TABLES.nodes],
      () => state.nodes.sorted().filter((n) => n.ID.startsWith(rc.options.prefix)),
      idTokenizer<NodeRow>(),
      stub,
      (n) => nodeFilterDatum(nodeView(n)),
    );
  });

  router.prefix("/v1/node/", async (rc) => {
    const [id, sub] = rc.rest.split("/", 2) as [string, string | undefined];
    if (nodeOps && (sub === "eligibility" || sub === "drain" || sub === "purge" || sub === "evaluate")) {
      only(rc, "PUT", "POST");
      if (sub === "purge" || sub === "evaluate") {
        const result = rpc(() => (sub === "purge" ? nodeOps.purge(id) : nodeOps.evaluate(id)));
        return new Write(
          { ...result, Features: 0, HeartbeatTTL: 0, KnownLeader: false, LastContact: 0, LeaderRPCAddr: "", NextToken: "", NumNodes: 0, SchedulingEligibility: "", Servers: null },
          result.Index,
        );
      }
      const body = await jsonBody(rc);
      if (sub === "eligibility") {
        const eligibility = typedField(body, "NodeUpdateEligibilityRequest", "Eligibility", "string") ?? "";
        const result = rpc(() => nodeOps.setEligibility(id, eligibility));
        return new Write(result, result.Index);
      }
      const spec = field(body, "DrainSpec");
      if (spec !== undefined && spec !== null && (typeof spec !== "object" || Array.isArray(spec)))
        throw badRequest(unmarshalTypeError(jsonKind(spec), "api.DrainSpec", "NodeUpdateDrainRequest.DrainSpec"));
      const drain = spec
        ? { Deadline: typedField(spec, "DrainSpec", "Deadline", "int64") ?? 0, IgnoreSystemJobs: typedField(spec, "DrainSpec", "IgnoreSystemJobs", "bool") ?? false }
        : null;
      const markEligible = typedField(body, "NodeUpdateDrainRequest", "MarkEligible", "bool") ?? false;
      const meta = typedField(body, "NodeUpdateDrainRequest", "Meta", "map[string]string") ?? null;
      const result = rpc(() => nodeOps.updateDrain(id, drain, markEligible, meta));
      return new Write(result, result.Index);
    }
    only(rc, "GET");
    // Only the allocations in namespaces the token may read (Nomad's Node.GetAllocs filters).
    if (sub === "allocations") {
      return read(rc, [TABLES.allocs], () =>
        state
          .allocsOnNode(id)
          .filter((a) => rc.acl.allowNamespace(a.Namespace, "read-job"))
          .map((a) => allocWire(a, state.job(a.Namespace, a.JobID))),
      );
    }
    if (sub !== undefined) return notYet(`/v1/node/:id/${sub}`);
    return read(
      rc,
      [TABLES.nodes],
      () => {
        const node = state.nodes.get(id);
        if (!node) throw new ReadError(404, "node not found", state.index(TABLES.nodes));
        return nodeView(node);
      },
      objectIndex(TABLES.nodes, () => state.nodes.get(id)),
    );
  });
}
