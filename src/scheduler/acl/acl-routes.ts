/**
 * The scheduler's ACL endpoints (bootstrap, policies, tokens) and the guard
 * every other route passes: which capability a request needs, from its route,
 * method and namespace (Nomad checks these in each RPC endpoint).
 */
import type { ServiceContext } from "../../core/context.js";
import { exceedsValueCount, parseBodyOnce } from "../../core/json.js";
import { ALLOW_ALL, type Authorizer } from "../http/authorizer.js";
import {
  ACL_TABLES,
  authorizerFromPolicies,
  parsePolicy,
  PolicyParseError,
  policyView,
  tokenBySecret,
  tokenView,
  type ParsedPolicy,
  type PolicyRow,
  type TokenRow,
} from "./acl.js";
import { formatMultierror } from "../../core/go/multierror.js";
import { jsonKind, unmarshalTypeError } from "../../core/go/json-errors.js";
import { badRequest, field, jsonBody, NomadError, notFound, Read, typedField, Write, type NomadRouter, type RequestContext } from "../http/nomad-http.js";

const str = (value: unknown): string => (typeof value === "string" ? value : "");
/** helper.IsUUID: 36 characters of hex in the 8-4-4-4-12 form, any case. */
const isUUID = (value: string): boolean => /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(value);

export const permissionDenied = () => new NomadError(403, "Permission denied");
const tokenNotFound = () => new NomadError(403, "ACL token not found");

type Json = Record<string, unknown>;

export interface SchedulerAcl {
  /**
   * The request's authorizer (ALLOW_ALL when ACLs are off). An unknown token
   * is 403 `Permission denied`, as Nomad 1.7+'s Authenticate answers; the ACL
   * endpoints authenticate in their handlers (bootstrap ignores the token).
   */
  resolve(secret: string | undefined, pattern?: string): Authorizer;
  /** The event stream's older ResolveToken path: an unknown token is 403 `ACL token not found`. */
  resolveForStream(secret: string | undefined): Authorizer;
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
    return authorizerFromPolicies(
      names.flatMap((name) => {
        const row = policies.get(name);
        return row ? [parsedRules(row.Rules)] : [];
      }),
    );
  };

  /** The caller's token (undefined = anonymous); an unknown secret throws `unknown()`. */
  const callerToken = (secret: string | undefined, unknown: () => NomadError = permissionDenied): TokenRow | undefined => {
    if (!secret) return undefined;
    const token = tokenBySecret(tokens, secret);
    if (!token) throw unknown();
    return token;
  };

  const resolve = (secret: string | undefined, pattern = ""): Authorizer => {
    if (!enabled() || pattern.startsWith("/v1/acl/")) return ALLOW_ALL;
    return authorizerOf(callerToken(secret));
  };
  const resolveForStream = (secret: string | undefined): Authorizer => (enabled() ? authorizerOf(callerToken(secret, tokenNotFound)) : ALLOW_ALL);
  /** The caller's policy names as Nomad's ACL endpoints see them (the anonymous token holds "anonymous"). */
  const callerPolicies = (token: TokenRow | undefined): string[] => (token ? (token.Policies ?? []) : ["anonymous"]);

  /** ACLPolicy.Validate: every problem, in Nomad's order, as one multierror 400. */
  const policyFrom = (body: Json, name: string): Omit<PolicyRow, "CreateIndex" | "ModifyIndex"> => {
    const rules = typeof body.Rules === "string" ? body.Rules : "";
    const description = typeof body.Description === "string" ? body.Description : "";
    const problems: string[] = [];
    if (!/^[a-zA-Z0-9-]{1,128}$/.test(name)) problems.push(`invalid name '${name}'`);
    try {
      parsePolicy(rules);
    } catch (error) {
      if (!(error instanceof PolicyParseError)) throw error;
      problems.push(`failed to parse rules: ${error.message}`);
    }
    if (description.length > 256) problems.push("description longer than 256");
    if (problems.length > 0) throw badRequest(`policy 0 invalid: ${formatMultierror(problems)}`);
    return { Name: name, Description: description, Rules: rules };
  };

  /**
   * ACLToken.Validate after Canonicalize: the whole token is the body (an
   * update keeps only the secret and the creation time), every problem
   * reported at once. Nomad does not check that the named policies exist.
   */
  const tokenFrom = (body: Json, existing: TokenRow | undefined, seeded: { AccessorID?: string; SecretID?: string } = {}): Omit<TokenRow, "CreateIndex" | "ModifyIndex"> => {
    const type = typeof body.Type === "string" ? body.Type : "";
    const policyList = Array.isArray(body.Policies) ? (body.Policies as unknown[]).map(String) : [];
    const name = typeof body.Name === "string" ? body.Name : "";
    const global = body.Global === true;
    const problems: string[] = [];
    if (name.length > 256) problems.push("token name too long");
    if (type === "client") {
      if (policyList.length === 0) problems.push("client token missing policies or roles");
    } else if (type === "management") {
      if (policyList.length > 0) problems.push("management token cannot be associated with policies or roles");
    } else problems.push("token type must be client or management");
    if (existing && existing.Global !== global) problems.push("cannot toggle global mode");
    if (problems.length > 0) throw badRequest(`token 0 invalid: ${formatMultierror(problems)}`);
    return {
      AccessorID: existing?.AccessorID ?? seeded.AccessorID ?? ctx.ids.uuid(),
      SecretID: existing?.SecretID ?? seeded.SecretID ?? ctx.ids.uuid(),
      Name: name,
      Type: type as TokenRow["Type"],
      Policies: policyList.length > 0 ? policyList : null,
      Global: global,
      CreateTime: existing?.CreateTime ?? ctx.clock.now(),
    };
  };

  const management = (rc: RequestContext) => {
    if (callerToken(rc.token)?.Type !== "management") throw permissionDenied();
  };

  /** A JSON object body (an empty one is `{}` where Nomad lets the body be optional). */
  const objectBody = async (rc: RequestContext, optional = false): Promise<Json> => {
    if (optional && (await rc.c.req.text()).trim() === "") return {};
    const value = await jsonBody(rc);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw badRequest(unmarshalTypeError(jsonKind(value), "struct"));
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

    router.exact(
      "/v1/acl/bootstrap",
      enabledOnly(async (rc) => {
        method(rc, "PUT", "POST");
        const done = bootstrap.get("state");
        if (done) throw badRequest(`ACL bootstrap already done (reset index: ${done.Index})`);
        const body = await objectBody(rc, true);
        const secret = typeof body.BootstrapSecret === "string" && body.BootstrapSecret ? body.BootstrapSecret : undefined;
        if (secret !== undefined && !isUUID(secret)) throw badRequest("invalid acl token");
        const token = ctx.store.write(() => {
          const accessor = ctx.ids.uuid();
          const row = tokens.putIndexed(accessor, {
            AccessorID: accessor,
            SecretID: secret ?? ctx.ids.uuid(),
            Name: "Bootstrap Token",
            Type: "management",
            Policies: null,
            Global: true,
            CreateTime: ctx.clock.now(),
          });
          bootstrap.putIndexed("state", { Index: row.CreateIndex });
          return row;
        });
        return new Write(tokenView(token), token.ModifyIndex);
      }),
    );

    router.exact(
      "/v1/acl/policies",
      enabledOnly((rc) => {
        method(rc, "GET");
        const caller = callerToken(rc.token);
        const own = caller?.Type === "management" ? undefined : new Set(callerPolicies(caller));
        return new Read(
          policies
            .sorted()
            .filter((p) => !own || own.has(p.Name))
            .map((p) => policyView(p, false)),
          ctx.store.tableIndex(ACL_TABLES.policies),
        );
      }),
    );

    router.prefix(
      "/v1/acl/policy/",
      enabledOnly(async (rc) => {
        const name = rc.rest;
        if (rc.method === "GET") {
          if (name === "") throw badRequest("Missing Policy Name");
          const caller = callerToken(rc.token);
          // Anyone may read the anonymous policy; other tokens only their own policies.
          if (caller?.Type !== "management" && name !== "anonymous" && !callerPolicies(caller).includes(name)) throw permissionDenied();
          const row = policies.get(name);
          if (!row) throw notFound("ACL policy not found");
          return new Read(policyView(row), row.ModifyIndex);
        }
        if (rc.method === "PUT" || rc.method === "POST") {
          if (name === "") throw badRequest("Missing Policy Name");
          const body = await objectBody(rc);
          if (field(body, "Name") !== name) throw badRequest("ACL policy name does not match request path");
          management(rc);
          const row = policyFrom({ Description: field(body, "Description"), Rules: field(body, "Rules") }, name);
          const written = ctx.store.write(() => policies.putIndexed(name, row));
          return new Write(undefined, written.ModifyIndex);
        }
        if (rc.method === "DELETE") {
          if (name === "") throw badRequest("Missing Policy Name");
          management(rc);
          // Nomad deletes without looking first: a missing policy is still a successful write.
          const index = ctx.store.write(() => {
            policies.delete(name);
            return ctx.store.writeIndex();
          });
          return new Write(undefined, index);
        }
        throw new NomadError(405, "Invalid method");
      }),
    );

    router.exact(
      "/v1/acl/tokens",
      enabledOnly((rc) => {
        method(rc, "GET");
        management(rc);
        return new Read(
          [...tokens.values()].sort((a, b) => a.CreateIndex - b.CreateIndex || (a.AccessorID < b.AccessorID ? -1 : 1)).map((t) => tokenView(t, false)),
          index(),
        );
      }),
    );

    /** ACL.UpsertTokens: a body naming an accessor updates that token, which must exist. */
    const upsertToken = (body: Json) => {
      const accessor = str(field(body, "AccessorID"));
      const existing = accessor ? tokens.get(accessor) : undefined;
      if (accessor && !existing) throw badRequest(`cannot find token ${accessor}`);
      const row = tokenFrom(
        { Name: field(body, "Name"), Type: field(body, "Type"), Policies: typedField(body, "ACLToken", "Policies", "[]string"), Global: field(body, "Global") },
        existing,
      );
      const written = ctx.store.write(() => tokens.putIndexed(row.AccessorID, row));
      return new Write(tokenView(written), written.ModifyIndex);
    };

    router.exact(
      "/v1/acl/token",
      enabledOnly(async (rc) => {
        method(rc, "PUT", "POST");
        const body = await objectBody(rc);
        management(rc);
        return upsertToken(body);
      }),
    );

    router.prefix(
      "/v1/acl/token/",
      enabledOnly(async (rc) => {
        if (rc.rest === "self") {
          method(rc, "GET");
          // Nomad's ResolveToken RPC (through 1.10.0): no secret is its lookup error, an unknown one 404.
          if (!rc.token) throw new NomadError(500, "acl token lookup failed: missing secret id");
          const token = tokenBySecret(tokens, rc.token);
          if (!token) throw notFound("ACL token not found");
          return new Read(tokenView(token), token.ModifyIndex);
        }
        if (rc.rest === "") throw badRequest("Missing Token Accessor");
        const existing = tokens.get(rc.rest);
        if (rc.method === "GET") {
          const caller = callerToken(rc.token);
          if (caller?.Type !== "management" && (!caller || caller.AccessorID !== rc.rest)) throw permissionDenied();
          if (!existing) throw notFound("ACL token not found");
          return new Read(tokenView(existing), existing.ModifyIndex);
        }
        if (rc.method === "PUT" || rc.method === "POST") {
          const body = await objectBody(rc);
          const given = str(field(body, "AccessorID"));
          if (given && given !== rc.rest) throw badRequest("ACL token accessor does not match request path");
          management(rc);
          return upsertToken({ ...body, AccessorID: rc.rest });
        }
        if (rc.method === "DELETE") {
          management(rc);
          if (!existing) throw badRequest(`Cannot delete nonexistent tokens: ${rc.rest}`);
          ctx.store.write(() => tokens.delete(rc.rest));
          return new Write(undefined, ctx.store.tableIndex(ACL_TABLES.tokens));
        }
        throw new NomadError(405, "Invalid method");
      }),
    );
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
        // A fixture may fix the token's IDs (the API generates them) and leave Type to default to client.
        const row = tokenFrom({ ...body, Type: body.Type ?? "client" }, undefined, { AccessorID: str(body.AccessorID) || undefined, SecretID: str(body.SecretID) || undefined });
        const stored = tokens.putIndexed(row.AccessorID, row);
        // A cluster seeded with a management token has been bootstrapped, at the index the fixture
        // wrote it: an anonymous bootstrap gets Nomad's "already done", never a second management token.
        if (stored.Type === "management" && !bootstrap.get("state")) bootstrap.putIndexed("state", { Index: stored.CreateIndex });
      } catch (error) {
        throw new Error(`${where}.tokens[${i}]: ${(error as Error).message.trim()}`);
      }
    });
  };

  return { resolve, resolveForStream, guard: guardRoute, seed, register };
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
  // A job written or planned is checked in the namespace the handler puts it in (query, then the body's
  // Namespace, then the job's, as Nomad's namespaceForJob), and in the job's own namespace too when that differs.
  const jobBody =
    (pattern === "/v1/jobs" || (pattern === "/v1/job/" && (!rc.rest.includes("/") || rc.rest.endsWith("/plan")))) && (rc.method === "PUT" || rc.method === "POST")
      ? await jobNamespaces(rc)
      : undefined;
  // Job routes read and write `default` when asked for `*`; only lists (which filter) and single objects
  // (whose own namespace the handler checks) may pass on `*`.
  const asked = jobBody ? rc.query.get("namespace") || jobBody.request || jobBody.job || "default" : rc.options.namespace;
  const ns = asked === "*" && pattern === "/v1/job/" ? "default" : asked;
  const read = rc.method === "GET";
  const nsCap = (...caps: string[]) =>
    ns === "*" || (caps.some((cap) => acl.allowNamespace(ns, cap)) && (jobBody?.job === undefined || caps.some((cap) => acl.allowNamespace(jobBody.job!, cap))));
  let ok = true;
  switch (pattern) {
    case "/v1/jobs":
      ok = read ? nsCap("list-jobs") : nsCap("submit-job");
      break;
    case "/v1/jobs/parse":
      ok = nsCap("parse-job", "submit-job");
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
    case "/v1/allocation/":
      // Nomad's GetAlloc looks the allocation up first and checks its own namespace (the handler does).
      ok = true;
      break;
    case "/v1/evaluations":
      // A batch delete validates its body, then wants a management token (the handler checks, in that order).
      ok = rc.method === "DELETE" || nsCap("read-job");
      break;
    case "/v1/evaluations/count":
    case "/v1/jobs/statuses":
    case "/v1/evaluation/":
    case "/v1/allocations":
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

/** The body's `Namespace` and `Job.Namespace` of a register or plan, where given (a body that does not parse is the handler's to reject). */
async function jobNamespaces(rc: RequestContext): Promise<{ request?: string; job?: string }> {
  const named = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);
  try {
    const text = await rc.c.req.text();
    if (exceedsValueCount(text)) return {}; // refused by the handler's decoding, unparsed
    const body = parseBodyOnce(rc.c.req.raw, text);
    return { request: named(field(body, "Namespace")), job: named(field(field(body, "Job"), "Namespace")) };
  } catch {
    return {};
  }
}
