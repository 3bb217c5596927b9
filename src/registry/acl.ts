/**
 * Registry ACLs (when `registry.acl.enabled`): tokens from the fixture with
 * rules in Consul's JSON rule syntax, e.g.
 *   { "session_prefix": { "": { "policy": "write" } }, "key_prefix": { "service/": { "policy": "read" } } }
 * An exact rule (`session`, `key`, `node`) beats any prefix rule, and the
 * longest prefix wins; write implies read; with no matching rule the default
 * policy decides. Denials carry Consul's message.
 */
import { RegistryError } from "./http.js";

export type Access = "read" | "write";
export type Resource = "session" | "key" | "node" | "agent" | "service" | "event";
type Level = "deny" | "read" | "write";

export interface AclSettings {
  [key: string]: unknown;
  enabled: boolean;
  defaultPolicy: "allow" | "deny";
  tokens: AclToken[];
}

export interface AclToken {
  [key: string]: unknown;
  AccessorID: string;
  SecretID: string;
  Description: string;
  Rules: Record<string, Record<string, Level>>;
}

/** The anonymous token's accessor ID in Consul. */
export const ANONYMOUS_ACCESSOR = "00000000-0000-0000-0000-000000000002";

export interface Authorizer {
  /** Whether ACLs are on and a token was presented (Consul shows the filtered header only then). */
  readonly presented: boolean;
  allowed(resource: Resource, name: string, access: Access): boolean;
  /** Throws Consul's 403 unless allowed. */
  require(resource: Resource, name: string, access: Access): void;
}

const allowAll: Authorizer = { presented: false, allowed: () => true, require: () => undefined };

/** Resolves the request's token; an unknown secret is 403 `ACL not found`. */
export function authorizerFor(acl: AclSettings, secret: string | undefined): Authorizer {
  if (!acl.enabled) return allowAll;
  const token = secret ? acl.tokens.find((t) => t.SecretID === secret) : acl.tokens.find((t) => t.AccessorID === ANONYMOUS_ACCESSOR);
  if (secret && !token) throw new RegistryError(403, "ACL not found");
  const rules = token?.Rules ?? {};
  const decide = (resource: Resource, name: string): Level => {
    const exact = rules[resource]?.[name];
    if (exact) return exact;
    let best: [string, Level] | undefined;
    for (const [prefix, level] of Object.entries(rules[`${resource}_prefix`] ?? {})) {
      if (name.startsWith(prefix) && (!best || prefix.length > best[0].length)) best = [prefix, level];
    }
    if (best) return best[1];
    return acl.defaultPolicy === "allow" ? "write" : "deny";
  };
  const allowed = (resource: Resource, name: string, access: Access) => {
    const level = decide(resource, name);
    return access === "read" ? level !== "deny" : level === "write";
  };
  return {
    presented: secret !== undefined,
    allowed,
    require(resource, name, access) {
      if (allowed(resource, name, access)) return;
      const permission = `'${resource}:${access}' on "${name}"`;
      throw new RegistryError(
        403,
        secret
          ? `Permission denied: token with AccessorID '${token!.AccessorID}' lacks permission ${permission}`
          : `Permission denied: anonymous token lacks permission ${permission}. The anonymous token is used implicitly when a request does not specify a token.`,
      );
    },
  };
}

/** Normalises a fixture token: rules given as an object or a JSON string, `{policy}` objects or bare levels. */
export function normalizeToken(raw: Record<string, unknown>, newAccessor: () => string): AclToken {
  const source = typeof raw.Rules === "string" ? (JSON.parse(raw.Rules) as Record<string, unknown>) : ((raw.Rules as Record<string, unknown>) ?? {});
  const rules: AclToken["Rules"] = {};
  for (const [kind, entries] of Object.entries(source)) {
    rules[kind] = {};
    for (const [name, value] of Object.entries((entries as Record<string, unknown>) ?? {})) {
      const level = typeof value === "string" ? value : (value as { policy?: unknown })?.policy;
      if (level !== "deny" && level !== "read" && level !== "write") throw new Error(`registry.acl: rule ${kind} "${name}" needs a policy of deny, read or write`);
      rules[kind]![name] = level;
    }
  }
  return {
    AccessorID: typeof raw.AccessorID === "string" ? raw.AccessorID : newAccessor(),
    SecretID: String(raw.SecretID ?? ""),
    Description: typeof raw.Description === "string" ? raw.Description : "",
    Rules: rules,
  };
}
