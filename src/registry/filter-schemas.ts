/**
 * The Go types Consul's `filter=` is validated against (go-bexpr v0.1.2 `CreateFilter(expr, nil, T)`), one
 * per element type an endpoint filters: which selectors exist, their kinds, and the `bexpr:"-"` fields
 * that are not selectable (RaftIndex's CreateIndex/ModifyIndex, EnterpriseMeta, Locality, a check's
 * Definition, …). Transcribed from Consul's agent/structs/structs.go (1.17) and, for api.AgentService,
 * consul/api v1.34.3's api/agent.go — field names are Go's, which Consul's JSON uses too.
 *
 * Endpoints and their element types (reference §7.2):
 *  - /v1/catalog/nodes → {@link NODE_FILTER} (structs.Node)
 *  - /v1/catalog/service/:name, /v1/catalog/services (before grouping) → {@link SERVICE_NODE_FILTER}
 *  - /v1/catalog/node/:node (the Services map's values) → {@link NODE_SERVICE_FILTER}
 *  - /v1/health/service/:name → {@link CHECK_SERVICE_NODE_FILTER}
 *  - /v1/health/checks/:svc, /state/:s, /node/:n, /v1/agent/checks → {@link HEALTH_CHECK_FILTER}
 *  - /v1/agent/services (the map's values) → {@link AGENT_SERVICE_FILTER} (api.AgentService)
 *
 * Checked by the go-bexpr oracle (test/oracles/consul-bexpr, docs/development.md): api.AgentService
 * against consul/api v1.34.3's own struct; the structs.* types against the oracle's hand-written
 * declarations of Consul 1.21's (agent/structs is BUSL, so read, not imported) — for those the oracle
 * checks go-bexpr's behaviour over the kinds, not the field lists themselves.
 */
import { goBool, goInt, goString, goStruct, mapOf, pointerTo, sliceOf, type FieldSchema, type StructSchema } from "../core/filter/typed/index.js";

const RAFT_INDEX = ["CreateIndex", "ModifyIndex", "RaftIndex"];
const ENTERPRISE_META = ["EnterpriseMeta", "Namespace", "Partition"];

const STRINGS = mapOf(goString);

/** structs.Weights / api.AgentWeights */
const WEIGHTS = goStruct({ Passing: goInt, Warning: goInt });
/** structs.ServiceAddress / api.ServiceAddress */
const SERVICE_ADDRESSES = mapOf(goStruct({ Address: goString, Port: goInt }));
const MESH_GATEWAY = goStruct({ Mode: goString });
const EXPOSE = goStruct({
  Checks: goBool,
  Paths: sliceOf(goStruct({ ListenerPort: goInt, Path: goString, LocalPathPort: goInt, Protocol: goString, ParsedFromCheck: goBool })),
});
const TRANSPARENT_PROXY = goStruct({ OutboundListenerPort: goInt, DialedDirectly: goBool });
/** structs.Upstream / api.Upstream (Config and CentrallyConfigured are `bexpr:"-"`) */
const UPSTREAM = goStruct(
  {
    DestinationType: goString,
    DestinationNamespace: goString,
    DestinationPartition: goString,
    DestinationPeer: goString,
    DestinationName: goString,
    Datacenter: goString,
    LocalBindAddress: goString,
    LocalBindPort: goInt,
    LocalBindSocketPath: goString,
    LocalBindSocketMode: goString,
    MeshGateway: MESH_GATEWAY,
  },
  ["Config", "CentrallyConfigured"],
);

/** api.AccessLogsConfig (a pointer in api.AgentServiceConnectProxyConfig, a value in structs.ConnectProxyConfig) */
const ACCESS_LOGS = goStruct({ Enabled: goBool, DisableListenerLogs: goBool, Type: goString, Path: goString, JSONFormat: goString, TextFormat: goString });

/** structs/api EnvoyExtension (Arguments is `bexpr:"-"`) */
const ENVOY_EXTENSION = goStruct({ Name: goString, Required: goBool, ConsulVersion: goString, EnvoyVersion: goString }, ["Arguments"]);

/** structs.ConnectProxyConfig (a struct value in NodeService and ServiceNode) */
const CONNECT_PROXY_CONFIG = goStruct(
  {
    EnvoyExtensions: sliceOf(ENVOY_EXTENSION),
    DestinationServiceName: goString,
    DestinationServiceID: goString,
    LocalServiceAddress: goString,
    LocalServicePort: goInt,
    LocalServiceSocketPath: goString,
    Mode: goString,
    Upstreams: sliceOf(UPSTREAM),
    MeshGateway: MESH_GATEWAY,
    Expose: EXPOSE,
    TransparentProxy: TRANSPARENT_PROXY,
    AccessLogs: ACCESS_LOGS,
  },
  ["Config"],
);

/** structs.ServiceConnect (SidecarService and PeerMeta are `bexpr:"-"`) */
const SERVICE_CONNECT = goStruct({ Native: goBool }, ["SidecarService", "PeerMeta"]);

/** structs.Node */
export const NODE_FILTER: StructSchema = goStruct(
  {
    ID: goString,
    Node: goString,
    Address: goString,
    Datacenter: goString,
    Partition: goString,
    PeerName: goString,
    TaggedAddresses: STRINGS,
    Meta: STRINGS,
  },
  ["Locality", ...RAFT_INDEX],
);

/** structs.HealthCheck */
export const HEALTH_CHECK_FILTER: StructSchema = goStruct(
  {
    Node: goString,
    CheckID: goString,
    Name: goString,
    Status: goString,
    Notes: goString,
    Output: goString,
    ServiceID: goString,
    ServiceName: goString,
    ServiceTags: sliceOf(goString),
    Type: goString,
    Interval: goString,
    Timeout: goString,
    ExposedPort: goInt,
    PeerName: goString,
  },
  ["Definition", ...ENTERPRISE_META, ...RAFT_INDEX],
);

/** structs.NodeService */
export const NODE_SERVICE_FILTER: StructSchema = goStruct(
  {
    Kind: goString,
    ID: goString,
    Service: goString,
    Tags: sliceOf(goString),
    Address: goString,
    TaggedAddresses: SERVICE_ADDRESSES,
    Meta: STRINGS,
    Port: goInt,
    SocketPath: goString,
    Weights: pointerTo(WEIGHTS),
    EnableTagOverride: goBool,
    Proxy: CONNECT_PROXY_CONFIG,
    Connect: SERVICE_CONNECT,
    PeerName: goString,
  },
  ["Locality", "LocallyRegisteredAsSidecar", ...ENTERPRISE_META, ...RAFT_INDEX],
);

/** structs.ServiceNode */
export const SERVICE_NODE_FILTER: StructSchema = goStruct(
  {
    ID: goString,
    Node: goString,
    Address: goString,
    Datacenter: goString,
    TaggedAddresses: STRINGS,
    NodeMeta: STRINGS,
    ServiceKind: goString,
    ServiceID: goString,
    ServiceName: goString,
    ServiceTags: sliceOf(goString),
    ServiceAddress: goString,
    ServiceTaggedAddresses: SERVICE_ADDRESSES,
    ServiceWeights: WEIGHTS,
    ServiceMeta: STRINGS,
    ServicePort: goInt,
    ServiceSocketPath: goString,
    ServiceEnableTagOverride: goBool,
    ServiceProxy: CONNECT_PROXY_CONFIG,
    ServiceConnect: SERVICE_CONNECT,
    PeerName: goString,
  },
  ["ServiceLocality", ...ENTERPRISE_META, ...RAFT_INDEX],
);

/** structs.CheckServiceNode: pointers to the node and the service, and the checks (a slice of pointers). */
export const CHECK_SERVICE_NODE_FILTER: StructSchema = goStruct({
  Node: pointerTo(NODE_FILTER),
  Service: pointerTo(NODE_SERVICE_FILTER),
  Checks: sliceOf(pointerTo(HEALTH_CHECK_FILTER)),
});

/** api.Upstream: structs.Upstream's fields and DestinationPort (consul/api v1.34.3, the multi-port services). */
const AGENT_UPSTREAM = goStruct({ ...UPSTREAM.fields, DestinationPort: goString }, UPSTREAM.excluded);

/**
 * api.AgentServiceConnectProxyConfig (a pointer in api.AgentService; Config and LocalServicePorts are
 * `bexpr:"-"`), as consul/api v1.34.3 declares it — the go-bexpr oracle (test/oracles/consul-bexpr)
 * builds against that struct itself.
 */
const AGENT_PROXY: FieldSchema = pointerTo(
  goStruct(
    {
      EnvoyExtensions: sliceOf(ENVOY_EXTENSION),
      DestinationServiceName: goString,
      DestinationServiceID: goString,
      LocalServiceAddress: goString,
      LocalServicePort: goInt,
      LocalServiceSocketPath: goString,
      Mode: goString,
      TransparentProxy: pointerTo(TRANSPARENT_PROXY),
      Upstreams: sliceOf(AGENT_UPSTREAM),
      MeshGateway: MESH_GATEWAY,
      Expose: EXPOSE,
      AccessLogs: pointerTo(ACCESS_LOGS),
    },
    ["Config", "LocalServicePorts"],
  ),
);

/** api.AgentService, what /v1/agent/services filters (its map's values). */
export const AGENT_SERVICE_FILTER: StructSchema = goStruct(
  {
    Kind: goString,
    ID: goString,
    Service: goString,
    Tags: sliceOf(goString),
    Meta: STRINGS,
    Port: goInt,
    Address: goString,
    SocketPath: goString,
    TaggedAddresses: SERVICE_ADDRESSES,
    Weights: WEIGHTS,
    EnableTagOverride: goBool,
    Proxy: AGENT_PROXY,
    Connect: pointerTo(goStruct({ Native: goBool }, ["SidecarService"])),
    // selectable: consul/api tags PeerName `json:",omitempty"` only (the go-bexpr oracle found it)
    PeerName: goString,
  },
  ["Ports", "CreateIndex", "ModifyIndex", "ContentHash", "Namespace", "Partition", "Datacenter", "Locality"],
);
