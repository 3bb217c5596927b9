/**
 * Node pools (reference §7.1; command/agent/node_pool_endpoint.go): the list
 * (`/v1/node/pools`, prefix, filter, pagination), upserts, one pool's read,
 * write and delete, and a pool's nodes and jobs. ACLs are the `node_pool`
 * policy blocks (read, write, delete), checked per pool as Nomad's RPCs do.
 */
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { badRequest, boolParam, field, invalidMethod, jsonBody, ReadError, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";
import { jobStub, jobView, nodeStub, TABLES, type JobRow, type NodeRow } from "../state/model.js";
import { NODE_POOL_ALL, NODE_POOLS_TABLE, NodePools, type NodePoolRow } from "../nodes/node-pools.js";
import { nodeView } from "../nodes/node-view.js";
import { idTokenizer, namespaceIdTokenizer, type Tokenizer } from "./paging.js";
import { cmp, only, pick, rpc } from "./helpers.js";
import type { RouteKit } from "./kit.js";

const byName: Tokenizer<NodePoolRow> = { token: (p) => p.Name, compare: cmp };

export function registerNodePoolRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, ctx, settings, read, readList } = kit;
  const pools = new NodePools(ctx.store.table(NODE_POOLS_TABLE), state);
  const allowed = (rc: RequestContext, pool: string, op: string) => {
    if (!rc.acl.allowNodePool(pool, op)) throw permissionDenied();
  };

  /** NodePool.UpsertNodePools for one pool, as the HTTP handler sends it. */
  const upsert = async (rc: RequestContext, pathName: string | undefined) => {
    const body = await jsonBody(rc);
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw badRequest(unmarshalTypeError(jsonKind(body), "structs.NodePool"));
    const name = typedField(body, "NodePool", "Name", "string") ?? "";
    if (pathName !== undefined && name !== pathName) throw badRequest("Node pool name does not match request path");
    const description = typedField(body, "NodePool", "Description", "string") ?? "";
    const meta = typedField(body, "NodePool", "Meta", "map[string]string") ?? null;
    const config = field(body, "SchedulerConfiguration");
    if (config !== undefined && config !== null && (typeof config !== "object" || Array.isArray(config)))
      throw badRequest(unmarshalTypeError(jsonKind(config), "structs.NodePoolSchedulerConfiguration", "NodePool.SchedulerConfiguration"));
    allowed(rc, name, "write");
    const written = rpc(() =>
      ctx.store.write(() =>
        pools.upsert({ Name: name, Description: description, Meta: meta, SchedulerConfiguration: (config as Record<string, unknown> | null | undefined) ?? null }),
      ),
    );
    return new Write(undefined, written.ModifyIndex);
  };

  router.exact("/v1/node/pools", async (rc) => {
    if (rc.method === "GET") {
      return readList(
        rc,
        [NODE_POOLS_TABLE],
        () => pools.list(rc.options.prefix).filter((p) => rc.acl.allowNodePool(p.Name, "read")),
        byName,
        (p) => p,
      );
    }
    only(rc, "PUT", "POST");
    return upsert(rc, undefined);
  });

  router.prefix("/v1/node/pool/", async (rc) => {
    const path = rc.rest;
    if (path.endsWith("/nodes")) return nodes(rc, path.slice(0, -"/nodes".length));
    if (path.endsWith("/jobs")) return jobs(rc, path.slice(0, -"/jobs".length));
    const name = path;
    if (rc.method === "GET") {
      allowed(rc, name, "read");
      return read(
        rc,
        [NODE_POOLS_TABLE],
        () => {
          const pool = pools.get(name);
          if (!pool) throw new ReadError(404, "node pool not found", Math.max(1, state.index(NODE_POOLS_TABLE)));
          return pool;
        },
        () => pools.get(name)?.ModifyIndex ?? state.index(NODE_POOLS_TABLE),
      );
    }
    if (rc.method === "PUT" || rc.method === "POST") return upsert(rc, name);
    if (rc.method === "DELETE") {
      allowed(rc, name, "delete");
      const index = rpc(() =>
        ctx.store.write(() => {
          pools.delete(name, settings().region);
          return ctx.store.writeIndex();
        }),
      );
      return new Write(undefined, index);
    }
    throw invalidMethod();
  });

  /** NodePool.ListNodes: `node:read` and the pool's read; every node for `all`; a missing pool lists nothing. */
  const nodes = (rc: RequestContext, name: string) => {
    only(rc, "GET");
    const resources = boolParam(rc.query, "resources");
    if (rc.options.prefix !== "") throw badRequest("prefix argument not allowed");
    if (!rc.acl.allow("node", "read")) throw permissionDenied();
    allowed(rc, name, "read");
    const stub = resources ? (n: NodeRow) => ({ ...nodeStub(n), ...pick(nodeView(n), "NodeResources", "ReservedResources") }) : nodeStub;
    return readList(
      rc,
      [TABLES.nodes],
      () => {
        if (!pools.get(name)) return [];
        return state.nodes.sorted().filter((n) => name === NODE_POOL_ALL || n.NodePool === name);
      },
      idTokenizer<NodeRow>(),
      stub,
      nodeView,
    );
  };

  /** NodePool.ListJobs: the pool's read; jobs in the namespaces whose `list-jobs` the token holds (all of them with `*`). */
  const jobs = (rc: RequestContext, name: string) => {
    only(rc, "GET");
    if (rc.options.prefix !== "") throw badRequest("prefix argument not allowed");
    allowed(rc, name, "read");
    const namespace = rc.options.namespace;
    return readList(
      rc,
      [TABLES.jobs, TABLES.summaries],
      () => {
        if (!pools.get(name)) return [];
        return [...state.jobs.values()]
          .filter((j) => j.NodePool === name && (namespace === "*" || j.Namespace === namespace) && rc.acl.allowNamespace(j.Namespace, "list-jobs"))
          .sort((a, b) => cmp(a.Namespace, b.Namespace) || cmp(a.ID, b.ID));
      },
      namespaceIdTokenizer<JobRow>(),
      (j) => jobStub(j, state.summaries.get(`${j.Namespace}\u0000${j.ID}`)),
      jobView,
    );
  };
}
