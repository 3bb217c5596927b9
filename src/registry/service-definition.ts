/**
 * Decoding and validating the agent's registration bodies as Consul does:
 * `structs.ServiceDefinition` (with its embedded `CheckType`s) and
 * `structs.CheckDefinition`. Consul decodes them with `lib.DecodeJSON`, a
 * json.Decoder with DisallowUnknownFields, so an unknown key is a 400
 * `Request decode failed: json: unknown field "Foo"`; known keys match
 * case-insensitively; duration fields take a Go duration string or a number
 * of nanoseconds (any other JSON type is ignored, as CheckType.UnmarshalJSON
 * does). The first error in document order wins, as Go's saveError keeps it.
 */
import { isIPv4, isIPv6 } from "node:net";
import { parseGoDuration } from "../core/durations.js";
import { jsonKind, unmarshalTypeError } from "../core/go/json-errors.js";
import { DecodeError } from "./decode.js";
import type { ServiceAddress } from "./state.js";

type Kind = "string" | "bool" | "int" | "[]string" | "map[string]string" | "map[string][]string" | "duration" | "any" | "object" | "[]object";

/** A field's decoder: its kind, and the struct field it fills when it is an alias (snake_case keys). */
type FieldSpec = Kind | { kind: Kind; into: string };

/** Nanoseconds, as a JS number (durations here are far below 2^53 ns in practice; larger ones keep their order). */
export type Nanos = number;

export interface CheckType {
  CheckID: string;
  Name: string;
  Status: string;
  Notes: string;
  ScriptArgs: string[];
  HTTP: string;
  H2PING: string;
  TCP: string;
  UDP: string;
  GRPC: string;
  OSService: string;
  AliasNode: string;
  AliasService: string;
  DockerContainerID: string;
  Interval: Nanos;
  Timeout: Nanos;
  TTL: Nanos;
  DeregisterCriticalServiceAfter: Nanos;
  OutputMaxSize: number;
  FailuresBeforeWarning: number;
  FailuresBeforeCritical: number;
  /** CheckType.Empty(): no field was given a non-zero value. */
  empty: boolean;
}

/** CheckType's JSON fields and UnmarshalJSON's aliases (agent/structs/check_type.go). */
const CHECK_TYPE_COMMON: Record<string, FieldSpec> = {
  Name: "string",
  Status: "string",
  Notes: "string",
  ScriptArgs: "[]string",
  HTTP: "string",
  H2PING: "string",
  H2PingUseTLS: "bool",
  Header: "map[string][]string",
  Method: "string",
  Body: "string",
  DisableRedirects: "bool",
  TCP: "string",
  TCPUseTLS: "bool",
  UDP: "string",
  Interval: "duration",
  AliasNode: "string",
  AliasService: "string",
  DockerContainerID: "string",
  Shell: "string",
  GRPC: "string",
  GRPCUseTLS: "bool",
  OSService: "string",
  TLSServerName: "string",
  TLSSkipVerify: "bool",
  Timeout: "duration",
  TTL: "duration",
  SuccessBeforePassing: "int",
  FailuresBeforeWarning: "int",
  FailuresBeforeCritical: "int",
  DeregisterCriticalServiceAfter: "duration",
  OutputMaxSize: "int",
  args: { kind: "[]string", into: "ScriptArgs" },
  script_args: { kind: "[]string", into: "ScriptArgs" },
  deregister_critical_service_after: { kind: "duration", into: "DeregisterCriticalServiceAfter" },
  docker_container_id: { kind: "string", into: "DockerContainerID" },
  tls_server_name: { kind: "string", into: "TLSServerName" },
  tls_skip_verify: { kind: "bool", into: "TLSSkipVerify" },
  grpc_use_tls: { kind: "bool", into: "GRPCUseTLS" },
  h2ping_use_tls: { kind: "bool", into: "H2PingUseTLS" },
};

const CHECK_TYPE_FIELDS: Record<string, FieldSpec> = {
  CheckID: "string",
  ...CHECK_TYPE_COMMON,
  ProxyHTTP: "string",
  ProxyGRPC: "string",
  // Accepted and ignored (CheckType.UnmarshalJSON lists them so the strict decoder lets them through).
  ServiceID: { kind: "string", into: "_ignored" },
  service_id: { kind: "string", into: "_ignored" },
};

const CHECK_DEFINITION_FIELDS: Record<string, FieldSpec> = {
  ID: "string",
  ServiceID: "string",
  Token: "string",
  ...CHECK_TYPE_COMMON,
  service_id: { kind: "string", into: "ServiceID" },
  disable_redirects: { kind: "bool", into: "DisableRedirects" },
};

const SERVICE_DEFINITION_FIELDS: Record<string, FieldSpec> = {
  Kind: "string",
  ID: "string",
  Name: "string",
  Tags: "[]string",
  Address: "string",
  TaggedAddresses: "object",
  Meta: "map[string]string",
  Port: "int",
  SocketPath: "string",
  Check: "object",
  Checks: "[]object",
  Weights: "object",
  Token: "string",
  EnableTagOverride: "bool",
  // Connect proxies and gateways are not emulated: their configuration is accepted as Consul's decoder would, and kept nowhere.
  Proxy: "any",
  Connect: "object",
  Locality: "any",
  enable_tag_override: { kind: "bool", into: "EnableTagOverride" },
  tagged_addresses: { kind: "object", into: "TaggedAddresses" },
};

/**
 * Decodes one JSON object strictly into the fields given: unknown keys fail,
 * `null` leaves a field unset. Returns the struct fields that were given.
 */
function decodeStrict(value: unknown, fields: Readonly<Record<string, FieldSpec>>, typeName: string): Record<string, unknown> {
  if (value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) throw new DecodeError(unmarshalTypeError(jsonKind(value), typeName));
  const byFolded = new Map(Object.keys(fields).map((f) => [f.toLowerCase(), f]));
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const name = Object.hasOwn(fields, key) ? key : byFolded.get(key.toLowerCase());
    if (name === undefined) throw new DecodeError(`json: unknown field ${JSON.stringify(key)}`);
    const spec = fields[name]!;
    const kind = typeof spec === "string" ? spec : spec.kind;
    const into = typeof spec === "string" ? name : spec.into;
    if (raw === null) continue;
    const decoded = decodeValue(raw, kind, name);
    // An alias fills its field only where the field itself was left empty (CheckType.UnmarshalJSON).
    if (into !== name && out[into] !== undefined && !isZero(out[into])) continue;
    if (decoded !== undefined) out[into] = decoded;
  }
  return out;
}

function decodeValue(raw: unknown, kind: Kind, field: string): unknown {
  const mismatch = (goType: string) => new DecodeError(unmarshalTypeError(typeof raw === "number" ? `number ${raw}` : jsonKind(raw), goType, `.${field}`));
  switch (kind) {
    case "any":
      return raw;
    case "string":
      if (typeof raw !== "string") throw mismatch("string");
      return raw;
    case "bool":
      if (typeof raw !== "boolean") throw mismatch("bool");
      return raw;
    case "int":
      if (typeof raw !== "number" || !Number.isInteger(raw)) throw mismatch("int");
      return raw;
    case "duration":
      if (typeof raw === "string") {
        try {
          return Number(parseGoDuration(raw));
        } catch (error) {
          throw new DecodeError((error as Error).message);
        }
      }
      return typeof raw === "number" ? Math.trunc(raw) : undefined;
    case "[]string":
      if (!Array.isArray(raw)) throw mismatch("[]string");
      for (const item of raw) if (typeof item !== "string" && item !== null) throw mismatch("string");
      return raw.map((item) => item ?? "");
    case "map[string]string": {
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch("map[string]string");
      const entries = Object.entries(raw as Record<string, unknown>);
      for (const [, item] of entries) if (typeof item !== "string" && item !== null) throw mismatch("string");
      return Object.fromEntries(entries.map(([k, item]) => [k, item ?? ""]));
    }
    case "map[string][]string":
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch("map[string][]string");
      return raw;
    case "object":
      if (typeof raw !== "object" || Array.isArray(raw)) throw mismatch("struct");
      return raw;
    case "[]object":
      if (!Array.isArray(raw)) throw mismatch("[]struct");
      for (const item of raw) if (item !== null && (typeof item !== "object" || Array.isArray(item))) throw mismatch("struct");
      return raw;
  }
}

function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === "" || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

function checkTypeFrom(fields: Record<string, unknown>, idField: "CheckID" | "ID"): CheckType {
  const str = (k: string) => (fields[k] as string | undefined) ?? "";
  const num = (k: string) => (fields[k] as number | undefined) ?? 0;
  const given = Object.entries(fields).filter(([k]) => k !== "_ignored");
  return {
    CheckID: str(idField),
    Name: str("Name"),
    Status: str("Status"),
    Notes: str("Notes"),
    ScriptArgs: (fields.ScriptArgs as string[] | undefined) ?? [],
    HTTP: str("HTTP"),
    H2PING: str("H2PING"),
    TCP: str("TCP"),
    UDP: str("UDP"),
    GRPC: str("GRPC"),
    OSService: str("OSService"),
    AliasNode: str("AliasNode"),
    AliasService: str("AliasService"),
    DockerContainerID: str("DockerContainerID"),
    Interval: num("Interval"),
    Timeout: num("Timeout"),
    TTL: num("TTL"),
    DeregisterCriticalServiceAfter: num("DeregisterCriticalServiceAfter"),
    OutputMaxSize: num("OutputMaxSize"),
    FailuresBeforeWarning: num("FailuresBeforeWarning"),
    FailuresBeforeCritical: num("FailuresBeforeCritical"),
    empty: given.every(([, v]) => isZero(v) || (typeof v === "object" && v !== null && Object.keys(v).length === 0)),
  };
}

/** CheckType.Validate's texts, in its order. */
export function validateCheckType(c: CheckType): string | undefined {
  const alias = c.AliasNode !== "" || c.AliasService !== "";
  const intervalCheck = c.ScriptArgs.length > 0 || c.HTTP !== "" || c.TCP !== "" || c.UDP !== "" || c.GRPC !== "" || c.H2PING !== "" || c.OSService !== "";
  if (c.Interval > 0 && c.TTL > 0) return "Interval and TTL cannot both be specified";
  if (intervalCheck && c.Interval <= 0) return "Interval must be > 0 for Script, HTTP, H2PING, TCP, UDP or OSService checks";
  if (intervalCheck && alias) return "Interval cannot be set for Alias checks";
  if (alias && c.TTL > 0) return "TTL must be not be set for Alias checks";
  if (!intervalCheck && !alias && c.TTL <= 0) return "TTL must be > 0 for TTL checks";
  if (c.OutputMaxSize < 0) return "MaxOutputMaxSize must be positive";
  if (c.FailuresBeforeWarning > c.FailuresBeforeCritical) return "FailuresBeforeWarning can't be higher than FailuresBeforeCritical";
  return undefined;
}

/** CheckType.Type(): the first match, interval kinds only with an interval. */
export function checkTypeName(c: CheckType): string {
  const interval = c.Interval > 0;
  const script = c.ScriptArgs.length > 0;
  if (c.GRPC !== "" && interval) return "grpc";
  if (c.HTTP !== "" && interval) return "http";
  if (c.TTL > 0) return "ttl";
  if (c.TCP !== "" && interval) return "tcp";
  if (c.UDP !== "" && interval) return "udp";
  if (c.AliasNode !== "" || c.AliasService !== "") return "alias";
  if (script && c.DockerContainerID !== "" && interval) return "docker";
  if (script) return "script";
  if (c.H2PING !== "" && interval) return "h2ping";
  if (c.OSService !== "" && interval) return "os_service";
  return "";
}

export function decodeCheckDefinition(body: unknown): CheckType & { ServiceID: string } {
  const fields = decodeStrict(body, CHECK_DEFINITION_FIELDS, "structs.CheckDefinition");
  return { ...checkTypeFrom(fields, "ID"), ServiceID: (fields.ServiceID as string | undefined) ?? "" };
}

export interface ServiceDefinition {
  Kind: string;
  ID: string;
  Name: string;
  Tags: string[];
  Address: string;
  TaggedAddresses: Record<string, ServiceAddress> | null;
  Meta: Record<string, string>;
  Port: number;
  SocketPath: string;
  Check: CheckType | undefined;
  Checks: CheckType[];
  Weights: { Passing: number; Warning: number } | undefined;
  EnableTagOverride: boolean;
  ConnectNative: boolean;
}

export function decodeServiceDefinition(body: unknown): ServiceDefinition {
  const fields = decodeStrict(body, SERVICE_DEFINITION_FIELDS, "structs.ServiceDefinition");
  const str = (k: string) => (fields[k] as string | undefined) ?? "";
  let tagged: Record<string, ServiceAddress> | null = null;
  if (fields.TaggedAddresses !== undefined) {
    tagged = {};
    for (const [key, raw] of Object.entries(fields.TaggedAddresses as Record<string, unknown>)) {
      if (raw === null) {
        tagged[key] = { Address: "", Port: 0 };
        continue;
      }
      const address = decodeStrict(decodeValue(raw, "object", "TaggedAddresses"), { Address: "string", Port: "int" }, "structs.ServiceAddress");
      tagged[key] = { Address: (address.Address as string | undefined) ?? "", Port: (address.Port as number | undefined) ?? 0 };
    }
  }
  let weights: ServiceDefinition["Weights"];
  if (fields.Weights !== undefined) {
    const w = decodeStrict(fields.Weights, { Passing: "int", Warning: "int" }, "structs.Weights");
    weights = { Passing: (w.Passing as number | undefined) ?? 0, Warning: (w.Warning as number | undefined) ?? 0 };
  }
  const connect = fields.Connect === undefined ? {} : decodeStrict(fields.Connect, { Native: "bool", SidecarService: "any" }, "structs.ServiceConnect");
  const check = fields.Check === undefined ? undefined : checkTypeFrom(decodeStrict(fields.Check, CHECK_TYPE_FIELDS, "structs.CheckType"), "CheckID");
  const checks = ((fields.Checks as unknown[] | undefined) ?? [])
    .filter((c) => c !== null)
    .map((c) => checkTypeFrom(decodeStrict(c, CHECK_TYPE_FIELDS, "structs.CheckType"), "CheckID"));
  return {
    Kind: str("Kind"),
    ID: str("ID"),
    Name: str("Name"),
    Tags: (fields.Tags as string[] | undefined) ?? [],
    Address: str("Address"),
    TaggedAddresses: tagged,
    Meta: (fields.Meta as Record<string, string> | undefined) ?? {},
    Port: (fields.Port as number | undefined) ?? 0,
    SocketPath: str("SocketPath"),
    Check: check,
    Checks: checks,
    Weights: weights,
    EnableTagOverride: (fields.EnableTagOverride as boolean | undefined) ?? false,
    ConnectNative: connect.Native === true,
  };
}

/** ipaddr.IsAny. */
export function isAnyAddress(address: string): boolean {
  return address === "0.0.0.0" || address === "::" || address === "[::]";
}

/** structs.ValidateWeights. */
export function weightsError(weights: { Passing: number; Warning: number }): string | undefined {
  if (weights.Passing < 1) return "Passing must be greater than 0";
  if (weights.Warning < 0) return "Warning must be greater or equal than 0";
  if (weights.Passing > 65535 || weights.Warning > 65535) return "DNS Weight must be between 0 and 65535";
  return undefined;
}

const META_KEY = /^[a-zA-Z0-9_-]+$/;

/** structs.metaMaxKeyPairs, metaKeyMaxLength, metaValueMaxLength and metaKeyReservedPrefix. */
export const META_MAX_PAIRS = 64;
export const META_KEY_MAX_LENGTH = 128;
export const META_VALUE_MAX_LENGTH = 512;
const META_RESERVED_PREFIX = "consul-";

/**
 * structs.validateMetadata: at most 64 pairs, keys of letters, digits, `_`
 * and `-` up to 128 characters, values up to 512 bytes (Go's len; its
 * message says characters), and (unless
 * `allowConsulPrefix`) no key under the reserved `consul-` prefix. Keys are
 * looked at in sorted order, where Go's map order is random. The agent's
 * service registration refuses the prefix; the catalog takes it (Consul's
 * agents write `consul-network-segment` there).
 */
export function metaError(meta: Record<string, string>, allowConsulPrefix = false): string | undefined {
  const keys = Object.keys(meta).sort();
  if (keys.length > META_MAX_PAIRS) return `Node metadata cannot contain more than ${META_MAX_PAIRS} key/value pairs`;
  for (const key of keys) {
    const value = meta[key]!;
    const reason =
      key === ""
        ? "Key cannot be blank"
        : !META_KEY.test(key)
          ? "Key contains invalid characters"
          : key.length > META_KEY_MAX_LENGTH
            ? `Key is too long (limit: ${META_KEY_MAX_LENGTH} characters)`
            : !allowConsulPrefix && key.startsWith(META_RESERVED_PREFIX)
              ? `Key prefix '${META_RESERVED_PREFIX}' is reserved for internal use`
              : Buffer.byteLength(value, "utf8") > META_VALUE_MAX_LENGTH
                ? `Value is too long (limit: ${META_VALUE_MAX_LENGTH} characters)`
                : undefined;
    if (reason) return `Couldn't load metadata pair ('${key}', '${value}'): ${reason}`;
  }
  return undefined;
}

/** Agent.validateService's tagged-address rule (a 500 from AddService). */
export function taggedAddressError(tagged: Record<string, ServiceAddress> | null): string | undefined {
  for (const [key, family, valid] of [
    ["lan_ipv4", "ipv4", isIPv4],
    ["wan_ipv4", "ipv4", isIPv4],
    ["lan_ipv6", "ipv6", isIPv6],
    ["wan_ipv6", "ipv6", isIPv6],
  ] as const) {
    const address = tagged?.[key];
    if (address && !valid(address.Address)) return `Service tagged address "${key}" must be a valid ${family} address`;
  }
  return undefined;
}
