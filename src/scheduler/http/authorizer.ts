/**
 * What a request may do, as the scheduler's HTTP plumbing asks it
 * (nomad-http.ts) and the ACL room answers it (acl/acl.ts builds one from a
 * token's policies): declared here, below both, so the plumbing needs
 * nothing of the ACL room.
 */
/** What a request may do. */
export interface Authorizer {
  readonly management: boolean;
  allowNamespace(namespace: string, capability: string): boolean;
  /** Any capability at all in the namespace (what the namespace list and read ask). */
  anyInNamespace(namespace: string): boolean;
  allow(kind: "node" | "agent" | "operator", level: "read" | "write"): boolean;
  /** A variables capability (list, read, write, destroy) on a path in a namespace (AllowVariableOperation). */
  allowVariable(namespace: string, path: string, capability: string): boolean;
  /** AllowNodePoolOperation: `op` (read, write, delete) in the pool, by its name or closest glob. */
  allowNodePool(pool: string, op: string): boolean;
  /**
   * What `namespace=*` asks of a namespace check (acl.go anyNamespaceAllowsOp /
   * anyNamespaceAllowsAnyOp): some namespace rule, exact or glob, not denied,
   * granting `capability` (any capability at all when none is named).
   */
  anyNamespaceAllows(capability?: string): boolean;
  /** AllowVariableSearch: any variables rule in a namespace whose name starts with `namespace` (any rule at all for `*`). */
  allowVariableSearch(namespace: string): boolean;
  /** AllowNodePoolSearch: some node pool rule that is not a deny. */
  allowNodePoolSearch(): boolean;
  /** AllowPluginRead (`read`) and AllowPluginList (`list` or `read`). */
  allowPlugin(op: "read" | "list"): boolean;
}

export const ALLOW_ALL: Authorizer = {
  management: true,
  allowNamespace: () => true,
  anyInNamespace: () => true,
  allow: () => true,
  allowVariable: () => true,
  allowNodePool: () => true,
  anyNamespaceAllows: () => true,
  allowVariableSearch: () => true,
  allowNodePoolSearch: () => true,
  allowPlugin: () => true,
};
