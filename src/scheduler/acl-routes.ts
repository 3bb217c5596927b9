/**
 * The scheduler's ACL endpoints (bootstrap, policies, tokens) and the guard
 * every other route passes: which capability a request needs, from its route,
 * method and namespace (Nomad checks these in each RPC endpoint).
 */
import type { ServiceContext } from "../core/context.js";
import { ACL_TABLES, ALLOW_ALL, authorizerFromPolicies, parsePolicy, PolicyParseError, policyView, tokenBySecret, tokenView, type Authorizer, type ParsedPolicy, type PolicyRow, type TokenRow } from "./acl.js";
import { badRequest, field, jsonBody, NomadError, notFound, Read, Write, type NomadRouter, type RequestContext } from "./http.js";

export const permissionDenied = () => new NomadError(403, "Permission denied");
const tokenNotFound = () => new NomadError(403, "ACL token not found");

type Json = Record<string, unknown>;

export interface SchedulerAcl {
  /** The request's authorizer (ALLOW_ALL when ACLs are off); throws 403 for an unknown token. */
  resolve(secret: string | undefined): Authorizer;
  /** Throws 403 unless the route's capability is held. */
  guard(rc: RequestContext, pattern: string, acl: Authorizer): void | Promise<void>;
  seed(section: { policies?: Json[]; tokens?: Json[] } | undefined, where: string): void;
}

export function createSchedulerAcl(ctx: ServiceContext, enabled: () => boolean): SchedulerAcl & { register(router: NomadRouter): void } {
  const policies = ctx.store.table<PolicyRow>(ACL_TABLES.policies);
  const tokens = ctx.store.table<TokenRow>(ACL_TABLES.tokens);
  const bootstrap = ctx.store.table<{ Index: number; CreateIndex: number; ModifyIndex: number }>(ACL_TABLES.bootstrap);
  const index = () => Math.max(1, ctx.store.tableIndex(ACL_TABLES.policies), ctx.store.tableIndex(ACL_TABLES.tokens));

  // Rules are validated when written, so every request would parse the same texts again: keep them parsed.
  const parsed = new Map<string, ParsedPolicy>();
  const parsedRules = (rules: string): ParsedPolicy => {
    let policy = parsed.get(rules);
    if (!policy) {
      if (parsed.size >= 1024) parsed.clear();
      policy = parsePolicy(rules);
      parsed.set(rules, policy);
    }
    return policy;
  };

  const authorizerOf = (token: TokenRow | undefined): Authorizer => {
    if (token?.Type === "management") return ALLOW_ALL;
    const names = token ? (token.Policies ?? []) : ["anonymous"];
    return authorizerFromPolicies(names.flatMap((name) => {
      const row = policies.get(name);
      return row ? [parsedRules(row.Rules)] : [];
    }));
  };

  const resolveToken = (secret: string | undefined): TokenRow | undefined => {
    if (!secret) return undefined;
    const token = tokenBySecret(tokens, secret);
    if (!token) throw tokenNotFound();
    return token;
  };

  const resolve = (secret: string | undefined): Authorizer => (enabled() ? authorizerOf(resolveToken(secret)) : ALLOW_ALL);

  /** Validates and normalizes a policy body; a bad one is the RPC's 400. */
  const policyFrom = (body: Json, name: string): Omit<PolicyRow, "CreateIndex" | "ModifyIndex"> => {
    const rules = typeof body.Rules === "string" ? body.Rules : "";
    if (!/^[a-zA-Z0-9-]{1,128}$/.test(name)) throw badRequest(`policy 0 invalid: 1 error occurred:\n\t* invalid name '${name}'\n\n`);
    try {
      parsePolicy(rules);
    } catch (error) {
      if (error instanceof PolicyParseError) throw badRequest(`policy 0 invalid: 1 error occurred:\n\t* failed to parse rules: ${error.message}\n\n`);
      throw error;
    }
    return { Name: name, Description: typeof body.Description === "string" ? body.Description : "", Rules: rules };
  };

  const tokenFrom = (body: Json, existing: TokenRow | undefined): Omit<TokenRow, "CreateIndex" | "ModifyIndex"> => {
    const type = (body.Type as string | undefined) ?? existing?.Type ?? "client";
    const list = Array.isArray(body.Policies) ? (body.Policies as unknown[]).map(String) : (existing?.Policies ?? null);
    if (type !== "client" && type !== "management") throw badRequest(`token 0 invalid: 1 error occurred:\n\t* token type must be client or management\n\n`);
    if (type === "client" && (!list || list.length === 0)) throw badRequest(`token 0 invalid: 1 error occurred:\n\t* client token missing policies\n\n`);
    if (type === "management" && list && list.length > 0) throw badRequest(`token 0 invalid: 1 error occurred:\n\t* management token cannot be associated with policies\n\n`);
    for (const name of list ?? []) if (!policies.get(name)) throw badRequest(`token 0 invalid: policy does not exist: ${name}`);
    return {
      AccessorID: existing?.AccessorID ?? (typeof body.AccessorID === "string" && body.AccessorID ? body.AccessorID : ctx.ids.uuid()),
      SecretID: existing?.SecretID ?? (typeof body.SecretID === "string" && body.SecretID ? body.SecretID : ctx.ids.uuid()),
      Name: typeof body.Name === "string" ? body.Name : (existing?.Name ?? ""),
      Type: type,
      Policies: type === "management" ? null : list,
      Global: typeof body.Global === "boolean" ? body.Global : (existing?.Global ?? false),
      CreateTime: existing?.CreateTime ?? ctx.clock.now(),
    };
  };

  const management = (rc: RequestContext) => {
    if (!resolve(rc.token).management) throw permissionDenied();
  };

  /** A JSON object body (an empty one is `{}` where Nomad lets the body be optional). */
  const objectBody = async (rc: RequestContext, optional = false): Promise<Json> => {
    if (optional && (await rc.c.req.text()).trim() === "") return {};
    const value = await jsonBody(rc);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(`json: cannot unmarshal ${Array.isArray(value) ? "array" : typeof value === "string" ? "string" : value === null ? "null" : typeof value} into Go value of type struct`);
    return value as Json;
  };

  const register = (router: NomadRouter) => {
    const enabledOnly = (handler: (rc: RequestContext) => unknown) => (rc: RequestContext) => {
      if (!enabled()) throw badRequest("ACL support disabled");
      return handler(rc);
    };
    const method = (rc: RequestContext, ...allowed: string[]) => {
      if (!allowed.includes(rc.method)) throw new NomadError(405, "Invalid method");
    };

    router.exact("/v1/acl/bootstrap", enabledOnly(async (rc) => {
      method(rc, "PUT", "POST");
      const done = bootstrap.get("state");
      if (done) throw badRequest(`ACL bootstrap already done (reset index: ${done.Index})`);
      const body = await objectBody(rc, true);
      const secret = typeof body.BootstrapSecret === "string" && body.BootstrapSecret ? body.BootstrapSecret : undefined;
      const token = ctx.store.write(() => {
        const accessor = ctx.ids.uuid();
        const row = tokens.putIndexed(accessor, { AccessorID: accessor, SecretID: secret ?? ctx.ids.uuid(), Name: "Bootstrap Token", Type: "management", Policies: null, Global: true, CreateTime: ctx.clock.now() });
        bootstrap.putIndexed("state", { Index: row.CreateIndex });
        return row;
      });
      return new Write(tokenView(token), token.ModifyIndex);
    }));

    router.exact("/v1/acl/policies", enabledOnly((rc) => {
      method(rc, "GET");
      const acl = resolve(rc.token);
      const own = acl.management ? undefined : new Set(tokenBySecret(tokens, rc.token ?? "")?.Policies ?? []);
      return new Read(policies.sorted().filter((p) => !own || own.has(p.Name)).map((p) => policyView(p, false)), ctx.store.tableIndex(ACL_TABLES.policies));
    }));

    router.prefix("/v1/acl/policy/", enabledOnly(async (rc) => {
      const name = rc.rest;
      if (rc.method === "GET") {
        const acl = resolve(rc.token);
        if (!acl.management && !(tokenBySecret(tokens, rc.token ?? "")?.Policies ?? []).includes(name)) throw permissionDenied();
        const row = policies.get(name);
        if (!row) throw notFound("ACL policy not found");
        return new Read(policyView(row), row.ModifyIndex);
      }
      if (rc.method === "PUT" || rc.method === "POST") {
        management(rc);
        const body = await objectBody(rc);
        if (typeof body.Name === "string" && body.Name !== "" && body.Name !== name) throw badRequest("Policy name does not match request path");
        const row = policyFrom(body, name);
        const written = ctx.store.write(() => policies.putIndexed(name, row));
        return new Write(undefined, written.ModifyIndex);
      }
      if (rc.method === "DELETE") {
        management(rc);
        if (!policies.get(name)) throw badRequest(`policy ${name} does not exist`);
        ctx.store.write(() => policies.delete(name));
        return new Write(undefined, ctx.store.tableIndex(ACL_TABLES.policies));
      }
      throw new NomadError(405, "Invalid method");
    }));

    router.exact("/v1/acl/tokens", enabledOnly((rc) => {
      method(rc, "GET");
      management(rc);
      return new Read([...tokens.values()].sort((a, b) => a.CreateIndex - b.CreateIndex || (a.AccessorID < b.AccessorID ? -1 : 1)).map((t) => tokenView(t, false)), index());
    }));

    router.exact("/v1/acl/token", enabledOnly(async (rc) => {
      method(rc, "PUT", "POST");
      management(rc);
      const body = await objectBody(rc);
      if (typeof body.AccessorID === "string" && body.AccessorID !== "" && tokens.get(body.AccessorID)) throw badRequest(`token 0 invalid: accessor ID ${body.AccessorID} already exists`);
      const row = tokenFrom(body, undefined);
      const written = ctx.store.write(() => tokens.putIndexed(row.AccessorID, row));
      return new Write(tokenView(written), written.ModifyIndex);
    }));

    router.prefix("/v1/acl/token/", enabledOnly(async (rc) => {
      if (rc.rest === "self") {
        method(rc, "GET");
        const token = resolveToken(rc.token);
        if (!token) throw notFound("ACL token not found");
        return new Read(tokenView(token), token.ModifyIndex);
      }
      const existing = tokens.get(rc.rest);
      if (rc.method === "GET") {
        const caller = resolveToken(rc.token);
        if (caller?.Type !== "management" && caller?.AccessorID !== rc.rest) throw permissionDenied();
        if (!existing) throw notFound("ACL token not found");
        return new Read(tokenView(existing), existing.ModifyIndex);
      }
      management(rc);
      if (rc.method === "PUT" || rc.method === "POST") {
        if (!existing) throw badRequest(`token 0 invalid: cannot find token ${rc.rest}`);
        const row = tokenFrom(await objectBody(rc), existing);
        const written = ctx.store.write(() => tokens.putIndexed(existing.AccessorID, row));
        return new Write(tokenView(written), written.ModifyIndex);
      }
      if (rc.method === "DELETE") {
        if (!existing) throw badRequest(`Cannot delete nonexistent tokens: ${rc.rest}`);
        ctx.store.write(() => tokens.delete(rc.rest));
        return new Write(undefined, ctx.store.tableIndex(ACL_TABLES.tokens));
      }
      throw new NomadError(405, "Invalid method");
    }));
  };

  const seed = (section: { policies?: Json[]; tokens?: Json[] } | undefined, where: string) => {
    (section?.policies ?? []).forEach((body, i) => {
      try {
        const name = String(body.Name ?? "");
        policies.putIndexed(name, policyFrom(body, name));
      } catch (error) {
        throw new Error(`${where}.policies[${i}]: ${(error as Error).message.trim()}`);
      }
    });
    (section?.tokens ?? []).forEach((body, i) => {
      try {
        const row = tokenFrom(body, undefined);
        tokens.putIndexed(row.AccessorID, row);
      } catch (error) {
        throw new Error(`${where}.tokens[${i}]: ${(error as Error).message.trim()}`);
      }
    });
  };

  return { resolve, guard: guardRoute, seed, register };
}

/**
 * What subscribing to the event stream needs (nomad/event_endpoint.go): the
 * job-like topics `read-job` in the namespace, node topics `node` read, and
 * everything else (`*`, ACL topics) a management token.
 */
export function guardEventStream(acl: Authorizer, topics: ReadonlyMap<string, readonly string[]>, namespace: string): void {
  if (acl.management) return;
  for (const topic of topics.keys()) {
    let ok: boolean;
    if (["Job", "Evaluation", "Allocation", "Deployment", "Service"].includes(topic)) ok = namespace !== "*" && acl.allowNamespace(namespace, "read-job");
    else if (topic === "Node" || topic === "NodeDrain" || topic === "NodePool") ok = acl.allow("node", "read");
    else ok = false;
    if (!ok) throw permissionDenied();
  }
}

/** The capability a route needs (Nomad's per-RPC checks); lists across `namespace=*` filter instead. */
async function guardRoute(rc: RequestContext, pattern: string, acl: Authorizer): Promise<void> {
  if (acl.management || pattern.startsWith("/v1/acl/")) return;
  // A job written is checked in its own namespace (Nomad sets the write's namespace from the job).
  const registers = (pattern === "/v1/jobs" || (pattern === "/v1/job/" && !rc.rest.includes("/"))) && (rc.method === "PUT" || rc.method === "POST");
  const ns = (registers ? await jobNamespace(rc) : undefined) ?? rc.options.namespace;
  const read = rc.method === "GET";
  const nsCap = (...caps: string[]) => ns === "*" || caps.some((cap) => acl.allowNamespace(ns, cap));
  let ok = true;
  switch (pattern) {
    case "/v1/jobs":
      ok = read ? nsCap("list-jobs") : nsCap("submit-job");
      break;
    case "/v1/jobs/parse":
      ok = nsCap("parse-job");
      break;
    case "/v1/validate/job":
      ok = nsCap("read-job");
      break;
    case "/v1/job/": {
      const suffix = rc.rest.includes("/") ? rc.rest.slice(rc.rest.indexOf("/") + 1) : "";
      if (suffix === "scale") ok = read ? nsCap("read-job-scaling", "read-job") : nsCap("scale-job", "submit-job");
      else if (read) ok = nsCap("read-job");
      else if (suffix === "dispatch" || suffix === "periodic/force") ok = nsCap("dispatch-job");
      else ok = nsCap("submit-job");
      break;
    }
    case "/v1/evaluations":
    case "/v1/evaluation/":
    case "/v1/allocations":
    case "/v1/allocation/":
      ok = nsCap("read-job");
      break;
    case "/v1/deployments":
    case "/v1/deployment/":
      ok = read ? nsCap("read-job") : nsCap("submit-job");
      break;
    case "/v1/nodes":
    case "/v1/node/":
    case "/v1/agent/members":
      ok = acl.allow("node", read ? "read" : "write");
      break;
    case "/v1/agent/self":
      ok = acl.allow("agent", "read");
      break;
    case "/v1/namespace/":
      ok = read ? acl.anyInNamespace(rc.rest) : false;
      break;
    case "/v1/namespace":
      ok = false;
      break;
    default:
      ok = true; // status, regions, agent health, the namespace list (filtered)
  }
  if (!ok) throw permissionDenied();
}

/** The `Job.Namespace` of a register body, if it names one (a body that does not parse is the handler's to reject). */
async function jobNamespace(rc: RequestContext): Promise<string | undefined> {
  try {
    const body = JSON.parse(await rc.c.req.text()) as unknown;
    const job = field(body, "Job");
    const namespace = field(job, "Namespace");
    return typeof namespace === "string" && namespace !== "" ? namespace : undefined;
  } catch {
    return undefined;
  }
}
