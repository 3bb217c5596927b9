/**
 * Scheduler ACLs (when `scheduler.acl.enabled`): policies in Nomad's rule
 * language (HCL or its JSON form), tokens that name them, and the
 * authorizer a request's token resolves to (acl/policy.go, acl/acl.go).
 *
 * Capabilities follow Nomad's expansion of the namespace policy shorthands;
 * `deny` anywhere for a namespace wins; namespace rules may be globs, and
 * the closest glob (fewest characters left to the wildcard) applies.
 */
import { formatInstant } from "../../core/instant.js";
import { excessiveNesting, MAX_JSON_DEPTH } from "../../core/json.js";
import type { Table } from "../../core/store.js";
import { goQuote } from "../../core/go/strconv.js";
import { goGlob } from "../../core/go/glob.js";
import type { Authorizer } from "../http/authorizer.js";

export const ACL_TABLES = { policies: "scheduler.acl-policies", tokens: "scheduler.acl-tokens", bootstrap: "scheduler.acl-bootstrap" } as const;

export type PolicyRow = { Name: string; Description: string; Rules: string; CreateIndex: number; ModifyIndex: number };
export type TokenRow = {
  AccessorID: string;
  SecretID: string;
  Name: string;
  Type: "client" | "management";
  Policies: string[] | null;
  Global: boolean;
  /** Virtual milliseconds. */
  CreateTime: number;
  CreateIndex: number;
  ModifyIndex: number;
};

const READ_CAPS = ["list-jobs", "parse-job", "read-job", "csi-list-volume", "csi-read-volume", "read-job-scaling", "list-scaling-policies", "read-scaling-policy"];
const WRITE_CAPS = [
  ...READ_CAPS,
  "scale-job",
  "submit-job",
  "dispatch-job",
  "read-logs",
  "read-fs",
  "alloc-exec",
  "alloc-lifecycle",
  "csi-write-volume",
  "csi-mount-volume",
  "submit-recommendation",
];
const SCALE_CAPS = ["list-scaling-policies", "read-scaling-policy", "read-job-scaling", "scale-job"];
const NAMESPACE_POLICIES: Record<string, string[]> = { deny: ["deny"], read: READ_CAPS, write: WRITE_CAPS, scale: SCALE_CAPS };
const VALID_CAPS = new Set([
  "deny",
  ...WRITE_CAPS,
  "sentinel-override",
  "host-volume-create",
  "host-volume-register",
  "host-volume-read",
  "host-volume-write",
  "host-volume-delete",
  "csi-register-plugin",
  "alloc-node-exec",
  "list-scaling-policies",
  "read-scaling-policy",
  "read-job-scaling",
  "scale-job",
]);
const LEVELS = ["deny", "read", "write"] as const;
type Level = (typeof LEVELS)[number] | "";

/** A parsed policy: per-namespace capability sets, variables path rules, and the node / agent / operator levels. */
export interface ParsedPolicy {
  namespaces: Map<string, Set<string>>;
  /** Variables capabilities by `<namespace>\0<path spec>` (either part may be a glob). */
  variables: Map<string, Set<string>>;
  /** `node_pool "<name or glob>"` blocks: their capabilities (read, write, delete, deny). */
  nodePools: Map<string, Set<string>>;
  node: Level;
  agent: Level;
  operator: Level;
  /** The `plugin` block's policy (deny, read, list): what CSI plugin reads and the search's plugins context ask. */
  plugin: PluginLevel;
}

type PluginLevel = "" | "deny" | "read" | "list";

export class PolicyParseError extends Error {}

/**
 * Nomad's acl.Parse (1.9, lenient): HCL or JSON rules to capabilities, with
 * its checks in its order and its errors' words (a rejected block is shown
 * as Go's `%#v` of Nomad's struct, as Nomad prints it).
 */
export function parsePolicy(rules: string): ParsedPolicy {
  const policy: ParsedPolicy = { namespaces: new Map(), variables: new Map(), nodePools: new Map(), node: "", agent: "", operator: "", plugin: "" };
  if (rules === "") return policy; // Nomad's hot path: empty rules are a valid, empty policy
  let tree: Tree;
  try {
    tree = parseRuleText(rules);
  } catch (error) {
    if (error instanceof PolicyParseError) throw new PolicyParseError(`Failed to parse ACL Policy: ${error.message}`);
    throw error;
  }
  const namespaces = Object.entries(asObject(tree.namespace));
  const levelBlocks = (["agent", "node", "operator"] as const).filter((kind) => tree[kind] !== undefined);
  const otherBlocks = ["node_pool", "host_volume", "quota", "plugin"].some((kind) => tree[kind] !== undefined);
  if (namespaces.length === 0 && levelBlocks.length === 0 && !otherBlocks) throw new PolicyParseError(`Invalid policy: ${rules}`);
  for (const [name, body] of namespaces) {
    const block = asObject(body);
    const shorthand = block.policy;
    const given = block.capabilities === undefined ? undefined : asArray(block.capabilities);
    const dump = () => namespaceDump(name, shorthand, given);
    if (!/^[a-zA-Z0-9\-*]{1,128}$/.test(name)) throw new PolicyParseError(`Invalid namespace name: ${dump()}`);
    if (shorthand !== undefined && shorthand !== "" && !(typeof shorthand === "string" && isPolicyValid(shorthand)))
      throw new PolicyParseError(`Invalid namespace policy: ${dump()}`);
    const caps = new Set<string>();
    for (const cap of given ?? []) {
      if (typeof cap !== "string" || !VALID_CAPS.has(cap)) throw new PolicyParseError(`Invalid namespace capability '${String(cap)}': ${dump()}`);
      caps.add(cap);
    }
    if (typeof shorthand === "string" && shorthand !== "") for (const c of NAMESPACE_POLICIES[shorthand] ?? []) caps.add(c);
    policy.namespaces.set(name, caps);
    if (block.variables !== undefined) for (const [spec, pathCaps] of parseVariablesBlock(name, block.variables)) policy.variables.set(`${name}\u0000${spec}`, pathCaps);
  }
  for (const [name, body] of Object.entries(asObject(tree.node_pool))) policy.nodePools.set(name, nodePoolCapabilities(name, asObject(body)));
  const pluginLevel = asObject(tree.plugin).policy;
  if (pluginLevel === "deny" || pluginLevel === "read" || pluginLevel === "list") policy.plugin = pluginLevel;
  for (const kind of levelBlocks) {
    const level = asObject(tree[kind]).policy;
    if (typeof level !== "string" || !isPolicyValid(level))
      throw new PolicyParseError(`Invalid ${kind} policy: &acl.${KIND_STRUCTS[kind]}{Policy:${goQuote(String(level ?? ""))}}`);
    // "scale" is a valid level anywhere, though it grants nothing outside namespaces.
    policy[kind] = level === "scale" ? "" : (level as Level);
  }
  return policy;
}

const VARIABLE_CAPS = new Set(["list", "read", "write", "destroy", "deny"]);

/**
 * A namespace's `variables { path "<spec>" { capabilities = [...] } }`:
 * Nomad's checks and texts; `read` brings `list` along, `deny` drops the rest
 * (expandVariablesCapabilities). A namespace policy's shorthand grants no
 * variables access: only path rules do.
 */
function parseVariablesBlock(namespace: string, block: unknown): Array<[string, Set<string>]> {
  const paths = Object.entries(asObject(asObject(block).path));
  if (paths.length === 0) throw new PolicyParseError(`Invalid variable policy: no variable paths in namespace ${namespace}`);
  return paths.map(([spec, body]) => {
    if (spec === "") throw new PolicyParseError(`Invalid missing variable path in namespace ${namespace}`);
    const caps = new Set<string>();
    for (const cap of asArray(asObject(body).capabilities)) {
      if (typeof cap !== "string" || !VARIABLE_CAPS.has(cap)) throw new PolicyParseError(`Invalid variable capability '${String(cap)}' in namespace ${namespace}`);
      caps.add(cap);
    }
    if (caps.has("deny")) return [spec, new Set(["deny"])];
    if (caps.has("read")) caps.add("list");
    return [spec, caps];
  });
}

/** Nomad's node pool block (acl/policy.go): a name or glob, a policy shorthand, capabilities; write expands to delete, read and write. */
const NODE_POOL_POLICIES: Record<string, string[]> = { deny: ["deny"], read: ["read"], write: ["delete", "read", "write"], scale: [] };
const NODE_POOL_CAPS = new Set(["delete", "deny", "read", "write"]);

function nodePoolCapabilities(name: string, block: Tree): Set<string> {
  const shorthand = block.policy;
  const given = block.capabilities === undefined ? undefined : asArray(block.capabilities);
  const capsText = given === undefined ? "[]string(nil)" : `[]string{${given.map((c) => goQuote(String(c))).join(", ")}}`;
  const dump = () => `&acl.NodePoolPolicy{Name:${goQuote(name)}, Policy:${goQuote(String(shorthand ?? ""))}, Capabilities:${capsText}}`;
  if (!/^[a-zA-Z0-9-_*]{1,128}$/.test(name)) throw new PolicyParseError(`Invalid node pool name: ${dump()}`);
  if (shorthand !== undefined && shorthand !== "" && !(typeof shorthand === "string" && isPolicyValid(shorthand)))
    throw new PolicyParseError(`Invalid node pool policy: ${dump()}`);
  const caps = new Set<string>();
  for (const cap of given ?? []) {
    if (typeof cap !== "string" || !NODE_POOL_CAPS.has(cap)) throw new PolicyParseError(`Invalid node pool capability '${String(cap)}': ${dump()}`);
    caps.add(cap);
  }
  if (typeof shorthand === "string" && shorthand !== "") for (const c of NODE_POOL_POLICIES[shorthand] ?? []) caps.add(c);
  return caps;
}

const KIND_STRUCTS = { agent: "AgentPolicy", node: "NodePolicy", operator: "OperatorPolicy" } as const;

/** isPolicyValid: the four shorthand levels. */
function isPolicyValid(level: string): boolean {
  return level === "deny" || level === "read" || level === "write" || level === "scale";
}

/** Go's `%#v` of the acl.NamespacePolicy Nomad rejects. */
function namespaceDump(name: string, shorthand: unknown, caps: unknown[] | undefined): string {
  const capsText = caps === undefined ? "[]string(nil)" : `[]string{${caps.map((c) => goQuote(String(c))).join(", ")}}`;
  return `&acl.NamespacePolicy{Name:${goQuote(name)}, Policy:${goQuote(String(shorthand ?? ""))}, Capabilities:${capsText}, Variables:(*acl.VariablesPolicy)(nil)}`;
}

export function authorizerFromPolicies(policies: ParsedPolicy[]): Authorizer {
  const namespaces = new Map<string, Set<string>>();
  const variables = new Map<string, Set<string>>();
  const nodePools = new Map<string, Set<string>>();
  const levels: Record<"node" | "agent" | "operator", Level> = { node: "", agent: "", operator: "" };
  let plugin: PluginLevel = "";
  for (const p of policies) {
    plugin = maxPluginLevel(plugin, p.plugin);
    for (const [name, caps] of p.namespaces) {
      const merged = namespaces.get(name) ?? new Set<string>();
      for (const c of caps) merged.add(c);
      namespaces.set(name, merged);
    }
    for (const [key, caps] of p.variables) {
      const merged = variables.get(key) ?? new Set<string>();
      for (const c of caps) merged.add(c);
      variables.set(key, merged);
    }
    for (const [name, caps] of p.nodePools) nodePools.set(name, new Set([...(nodePools.get(name) ?? []), ...caps]));
    for (const kind of ["node", "agent", "operator"] as const) levels[kind] = maxLevel(levels[kind], p[kind]);
  }
  const capsFor = (namespace: string): Set<string> | undefined => namespaces.get(namespace) ?? closestGlob(namespaces, namespace);
  return {
    management: false,
    allowNamespace(namespace, capability) {
      const caps = capsFor(namespace);
      return caps !== undefined && !caps.has("deny") && caps.has(capability);
    },
    anyInNamespace(namespace) {
      const caps = capsFor(namespace);
      return caps !== undefined && !caps.has("deny") && caps.size > 0;
    },
    allow(kind, level) {
      const have = levels[kind];
      return have === "write" || (have === "read" && level === "read");
    },
    allowVariable(namespace, path, capability) {
      // An exact rule first, else the closest glob over namespace and path together (Nomad's radix keys).
      const key = `${namespace}\u0000${path}`;
      const caps = variables.get(key) ?? closestGlob(variables, key);
      return caps !== undefined && !caps.has("deny") && caps.has(capability);
    },
    allowNodePool(pool, op) {
      const caps = nodePools.get(pool) ?? closestGlob(nodePools, pool);
      return caps !== undefined && !caps.has("deny") && caps.has(op);
    },
    anyNamespaceAllows(capability) {
      return [...namespaces.values()].some((caps) => !caps.has("deny") && (capability === undefined ? caps.size > 0 : caps.has(capability)));
    },
    allowVariableSearch(namespace) {
      // Nomad seeks the rules' radix keys (`<namespace>\0<path>`) by the namespace's bytes: a rule for `prod-eu` counts for `prod`.
      return namespace === "*" ? variables.size > 0 : [...variables.keys()].some((key) => key.startsWith(namespace));
    },
    allowNodePoolSearch() {
      return [...nodePools.values()].some((caps) => !caps.has("deny"));
    },
    allowPlugin(op) {
      return plugin === "read" || (op === "list" && plugin === "list");
    },
  };
}

/** Deny beats read beats list, as Nomad merges plugin policies. */
function maxPluginLevel(a: PluginLevel, b: PluginLevel): PluginLevel {
  if (a === "deny" || b === "deny") return "deny";
  if (a === "read" || b === "read") return "read";
  return a || b;
}

/** Deny beats write beats read, as Nomad merges policies. */
function maxLevel(a: Level, b: Level): Level {
  if (a === "deny" || b === "deny") return "deny";
  if (a === "write" || b === "write") return "write";
  if (a === "read" || b === "read") return "read";
  return "";
}

function closestGlob(namespaces: Map<string, Set<string>>, namespace: string): Set<string> | undefined {
  let best: { caps: Set<string>; distance: number; glob: string } | undefined;
  for (const [glob, caps] of namespaces) {
    if (!glob.includes("*") || !goGlob(glob, namespace)) continue;
    const distance = namespace.length - glob.replaceAll("*", "").length;
    if (!best || distance < best.distance || (distance === best.distance && glob < best.glob)) best = { caps, distance, glob };
  }
  return best?.caps;
}

export function tokenView(t: TokenRow, withSecret = true): Record<string, unknown> {
  const { SecretID, CreateTime, ...rest } = t;
  return { ...rest, CreateTime: formatInstant(CreateTime), Roles: null, ...(withSecret ? { SecretID } : {}) };
}

export function policyView(p: PolicyRow, withRules = true): Record<string, unknown> {
  const { Rules, ...rest } = p;
  return { ...rest, ...(withRules ? { Rules, JobACL: null } : {}) };
}

/** The tokens table's lookup by secret. */
export function tokenBySecret(tokens: Table<TokenRow>, secret: string): TokenRow | undefined {
  for (const t of tokens.values()) if (t.SecretID === secret) return t;
  return undefined;
}

// ---- rule text --------------------------------------------------------------------

type Tree = Record<string, unknown>;

function asObject(value: unknown): Tree {
  if (value === undefined || value === null) return {};
  // HCL's JSON form nests blocks in arrays: [{"default": [{"policy": "read"}]}].
  if (Array.isArray(value)) return Object.assign({}, ...value.map(asObject)) as Tree;
  if (typeof value === "object") return value as Tree;
  throw new PolicyParseError(`unexpected value ${JSON.stringify(value)}`);
}

function asArray(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function parseRuleText(rules: string): Tree {
  const trimmed = rules.trim();
  if (trimmed.startsWith("{")) {
    try {
      const tree = JSON.parse(trimmed) as unknown;
      // Reading the rules recurses into them: refuse absurd nesting before it does.
      if (excessiveNesting(trimmed) >= 0) throw new PolicyParseError(`invalid JSON: nested deeper than ${MAX_JSON_DEPTH} levels`);
      return asObject(tree);
    } catch (error) {
      if (error instanceof PolicyParseError) throw error;
      throw new PolicyParseError(`invalid JSON: ${(error as Error).message}`);
    }
  }
  return new HclParser(rules).body(true);
}

/**
 * A string literal's text: HCL keeps raw control characters (JSON wants them
 * escaped) and refuses an escape it does not know.
 */
function unquote(body: string, line: number, start: number): string {
  const escaped = body.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  try {
    return JSON.parse(`"${escaped}"`) as string;
  } catch {
    throw new PolicyParseError(`At ${line}:${start + 1}: illegal char escape`);
  }
}

/** The part of HCL policies use: blocks with labels, `key = value` with strings, numbers, bools and lists, comments. */
class HclParser {
  private readonly tokens: { t: string; v: string; line: number }[] = [];
  private at = 0;

  constructor(text: string) {
    const re = /\s+|#[^\n]*|\/\/[^\n]*|\/\*[\s\S]*?\*\/|"((?:[^"\\\n]|\\.)*)"|([A-Za-z_][A-Za-z0-9_.-]*)|(-?\d+(?:\.\d+)?)|([={}[\],])/y;
    let line = 1;
    while (re.lastIndex < text.length) {
      const start = re.lastIndex;
      const m = re.exec(text);
      if (!m) throw new PolicyParseError(`At ${line}:${start + 1}: illegal char`);
      if (m[1] !== undefined) this.tokens.push({ t: "string", v: unquote(m[1], line, start), line });
      else if (m[2] !== undefined) this.tokens.push({ t: m[2] === "true" || m[2] === "false" ? "bool" : "ident", v: m[2], line });
      else if (m[3] !== undefined) this.tokens.push({ t: "number", v: m[3], line });
      else if (m[4] !== undefined) this.tokens.push({ t: m[4], v: m[4], line });
      line += (m[0].match(/\n/g) ?? []).length;
    }
    // The parser recurses into blocks and lists: refuse absurd nesting before it does.
    let depth = 0;
    for (const tok of this.tokens) {
      if (tok.t === "{" || tok.t === "[") {
        if (++depth > MAX_JSON_DEPTH) throw new PolicyParseError(`At ${tok.line}: blocks and lists nested deeper than ${MAX_JSON_DEPTH} levels`);
      } else if (tok.t === "}" || tok.t === "]") depth--;
    }
  }

  body(top: boolean): Tree {
    const out: Tree = {};
    for (;;) {
      const tok = this.tokens[this.at];
      if (!tok) {
        if (top) return out;
        throw new PolicyParseError("expected '}' before end of input");
      }
      if (tok.t === "}") {
        if (top) throw new PolicyParseError(`At ${tok.line}: unexpected '}'`);
        this.at++;
        return out;
      }
      if (tok.t !== "ident" && tok.t !== "string") throw new PolicyParseError(`At ${tok.line}: expected a key, found '${tok.v}'`);
      this.at++;
      const key = tok.v;
      const next = this.tokens[this.at];
      if (next?.t === "=") {
        this.at++;
        out[key] = this.value();
        continue;
      }
      const labels: string[] = [];
      while (this.tokens[this.at]?.t === "string") labels.push(this.tokens[this.at++]!.v);
      if (this.tokens[this.at]?.t !== "{") throw new PolicyParseError(`At ${tok.line}: expected '{' or '=' after ${key}`);
      this.at++;
      const block = this.body(false);
      let target = out;
      const path = [key, ...labels];
      for (const part of path.slice(0, -1)) target = (target[part] ??= {}) as Tree;
      target[path[path.length - 1]!] = { ...((target[path[path.length - 1]!] as Tree | undefined) ?? {}), ...block };
    }
  }

  private value(): unknown {
    const tok = this.tokens[this.at++];
    if (!tok) throw new PolicyParseError("expected a value before end of input");
    if (tok.t === "string") return tok.v;
    if (tok.t === "number") return Number(tok.v);
    if (tok.t === "bool") return tok.v === "true";
    if (tok.t === "[") {
      const items: unknown[] = [];
      while (this.tokens[this.at]?.t !== "]") {
        if (!this.tokens[this.at]) throw new PolicyParseError("expected ']' before end of input");
        items.push(this.value());
        if (this.tokens[this.at]?.t === ",") this.at++;
      }
      this.at++;
      return items;
    }
    throw new PolicyParseError(`At ${tok.line}: unexpected '${tok.v}'`);
  }
}
