/**
 * The search contexts of Nomad v1.9.7 (nomad/structs/search.go,
 * nomad/search_endpoint.go): their names, `all`'s expansion, the error for a
 * context Nomad does not know, the ACL checks that keep a context out of an
 * answer (or refuse the request), and the limits Nomad's agent defaults to.
 */
import { goQuote } from "../../core/go/strconv.js";
import type { Authorizer } from "../http/authorizer.js";
import { serverError } from "../http/nomad-http.js";

/** `ossContexts`, in Nomad's order: what `all` searches. */
export const CONTEXTS = ["allocs", "jobs", "nodes", "node_pools", "evals", "deployment", "plugins", "volumes", "scaling_policy", "vars", "namespaces"] as const;
export type SearchContext = (typeof CONTEXTS)[number];

/** The job's parts a fuzzy search on jobs also answers under their own keys. */
export type JobPartContext = "groups" | "services" | "tasks" | "images" | "commands" | "classes";

/** Contexts searched by ID prefix even in a fuzzy search (their IDs are UUIDs, or CSI volume names). */
export const PREFIX_ONLY: ReadonlySet<string> = new Set(["evals", "deployment", "scaling_policy", "volumes"]);

/** Contexts whose memdb `id` index is a UUIDFieldIndex: a prefix that is not hex is an error Nomad silences (the context is left out). */
export const UUID_INDEXED: ReadonlySet<string> = new Set(["allocs", "nodes", "evals", "deployment"]);

/** `truncateLimit`: the most IDs a prefix search scans (and answers) per context. */
export const TRUNCATE_LIMIT = 20;

/** The agent's `search` block defaults (command/agent/config.go): fuzzy on, 20 objects scanned and 100 results kept per context, 2 characters at least. */
export const FUZZY_LIMITS = { limitQuery: 20, limitResults: 100, minTermLength: 2 } as const;

export const isKnownContext = (context: string): context is SearchContext => (CONTEXTS as readonly string[]).includes(context);

/** expandContext: `all` is every context; anything else is itself (an unknown one fails when it is scanned). */
export function expandContext(context: string): string[] {
  return context === "all" ? [...CONTEXTS] : [context];
}

/** getEnterpriseResourceIter's error for a context CE does not have (a 500, as an RPC error). */
export function unknownContext(context: string) {
  return serverError(`context must be one of [${CONTEXTS.join(" ")}] or 'all' for all contexts; got ${goQuote(context)}`);
}

/** AllowNsOp: `*` asks whether any namespace rule grants the capability. */
export function allowNsOp(acl: Authorizer, namespace: string, capability: string): boolean {
  if (acl.management) return true;
  return namespace === "*" ? acl.anyNamespaceAllows(capability) : acl.allowNamespace(namespace, capability);
}

/** AllowNamespace: any capability in the namespace (for `*`, in any namespace). */
export function allowNamespaceAny(acl: Authorizer, namespace: string): boolean {
  if (acl.management) return true;
  return namespace === "*" ? acl.anyNamespaceAllows() : acl.anyInNamespace(namespace);
}

/** The CSI volume check: any of csi-list-volume, csi-read-volume, list-jobs, read-job. */
const volumeRead = (acl: Authorizer, namespace: string) =>
  ["csi-list-volume", "csi-read-volume", "list-jobs", "read-job"].some((capability) => allowNsOp(acl, namespace, capability));

/**
 * sufficientSearchPerms: a context asked for by name that the token may not
 * read at all is refused (403) rather than answered empty; `all` and unknown
 * contexts pass.
 */
export function sufficientSearchPerms(acl: Authorizer, namespace: string, context: string): boolean {
  if (acl.management) return true;
  switch (context) {
    case "nodes":
      return acl.allow("node", "read");
    case "node_pools":
      return acl.allowNodePoolSearch();
    case "namespaces":
      return allowNamespaceAny(acl, namespace);
    case "allocs":
    case "deployment":
    case "evals":
    case "jobs":
    case "scaling_policy":
      return allowNsOp(acl, namespace, "read-job");
    case "volumes":
      return volumeRead(acl, namespace);
    case "vars":
      return acl.allowVariableSearch(namespace);
    case "plugins":
      return acl.allowPlugin("list");
    default:
      return true;
  }
}

/** filteredSearchContexts: the expanded contexts the token may search in the namespace (unknown ones stay, to fail). */
export function filteredSearchContexts(acl: Authorizer, namespace: string, context: string): string[] {
  const desired = expandContext(context);
  if (acl.management) return desired;
  const jobRead = allowNsOp(acl, namespace, "read-job");
  return desired.filter((c) => {
    switch (c) {
      case "allocs":
      case "jobs":
      case "evals":
      case "deployment":
        return jobRead;
      case "scaling_policy":
        return jobRead || allowNsOp(acl, namespace, "list-scaling-policies");
      case "namespaces":
        return allowNamespaceAny(acl, namespace);
      case "vars":
        return acl.allowVariableSearch(namespace);
      case "nodes":
        return acl.allow("node", "read");
      case "node_pools":
        return acl.allowNodePoolSearch();
      case "volumes":
        return volumeRead(acl, namespace);
      case "plugins":
        return acl.allowPlugin("list");
      default:
        return true;
    }
  });
}

/**
 * roundUUIDDownIfOdd: unless the request's context is `jobs`, a prefix of odd
 * length (hyphens aside) loses its last byte. Go cuts bytes, so a cut
 * multi-byte character leaves a partial sequence: the prefix is kept as bytes.
 */
export function roundUUIDDownIfOdd(prefix: string, context: string): Buffer {
  const bytes = Buffer.from(prefix, "utf8");
  if (context === "jobs") return bytes;
  const hyphens = prefix.split("-").length - 1;
  return (bytes.length - hyphens) % 2 === 0 ? bytes : bytes.subarray(0, bytes.length - 1);
}

/** Whether `id` starts with `prefix`'s bytes (strings.HasPrefix, or a memdb string index's prefix seek). */
export function startsWithBytes(id: string, prefix: Buffer): boolean {
  if (prefix.length === 0) return true;
  // IDs and prefixes are ASCII nearly always: compare as strings when the prefix is.
  if (prefix.every((b) => b < 0x80)) return id.startsWith(prefix.toString("latin1"));
  const idBytes = Buffer.from(id, "utf8");
  return idBytes.length >= prefix.length && idBytes.subarray(0, prefix.length).equals(prefix);
}

/**
 * go-memdb's UUIDFieldIndex prefix: the hex digits (lower-cased, hyphens
 * dropped) an ID must start with, or undefined where memdb answers an error
 * Nomad's search silences (over 36 bytes, more than 4 hyphens, odd length,
 * not hex) and the context is left out of the answer.
 */
export function uuidPrefix(prefix: Buffer): string | undefined {
  if (prefix.length > 36) return undefined;
  const hyphens = prefix.filter((b) => b === 0x2d).length;
  if (hyphens > 4) return undefined;
  // Not hex (a non-ASCII byte included) fails after the length check, whatever the length.
  const digits = prefix.toString("latin1").replaceAll("-", "");
  if (digits.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(digits)) return undefined;
  return digits.toLowerCase();
}
