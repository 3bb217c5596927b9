// The typed objects Consul filters with go-bexpr v0.1.2, declared here with the field names, Go kinds
// and `bexpr` tags of Consul's agent/structs types, read at the commits SOURCES.md names (BUSL-licensed
// since 1.17, so neither imported nor copied: these are small hand-written declarations of the same
// shape). go-bexpr v0.1.2
// builds its field configuration from the type by reflection, so what matters is each field's name,
// kind (struct vs pointer to struct, map vs slice and their element kinds, int vs string) and
// whether it is tagged `bexpr:"-"`. A `bexpr:"-"` field is left out here instead: to v0.1.2 the two
// are the same (not selectable), and encoding/json ignores the keys it does not know.
//
// /v1/agent/services filters consul/api's own AgentService (MPL-2.0), which is imported as is.
package main

// structs.Weights / structs.ServiceAddress
type Weights struct {
	Passing int
	Warning int
}

type ServiceAddress struct {
	Address string
	Port    int
}

// structs.Node (Locality and the embedded RaftIndex are `bexpr:"-"`)
type Node struct {
	ID              string
	Node            string
	Address         string
	Datacenter      string
	Partition       string `json:",omitempty"`
	PeerName        string `json:",omitempty"`
	TaggedAddresses map[string]string
	Meta            map[string]string
}

// structs.HealthCheck (Definition, EnterpriseMeta and RaftIndex are `bexpr:"-"`)
type HealthCheck struct {
	Node        string
	CheckID     string
	Name        string
	Status      string
	Notes       string
	Output      string
	ServiceID   string
	ServiceName string
	ServiceTags []string
	Type        string
	Interval    string
	Timeout     string
	ExposedPort int
	PeerName    string `json:",omitempty"`
}

type MeshGatewayConfig struct {
	Mode string
}

type ExposePath struct {
	ListenerPort    int
	Path            string
	LocalPathPort   int
	Protocol        string
	ParsedFromCheck bool
}

type ExposeConfig struct {
	Checks bool
	Paths  []ExposePath
}

type TransparentProxyConfig struct {
	OutboundListenerPort int
	DialedDirectly       bool
}

type AccessLogsConfig struct {
	Enabled             bool
	DisableListenerLogs bool
	Type                string
	Path                string
	JSONFormat          string
	TextFormat          string
}

// structs.EnvoyExtension (Arguments is `bexpr:"-"`)
type EnvoyExtension struct {
	Name          string
	Required      bool
	ConsulVersion string
	EnvoyVersion  string
}

// structs.Upstream (Config and CentrallyConfigured are `bexpr:"-"`)
type Upstream struct {
	DestinationType      string
	DestinationNamespace string
	DestinationPartition string
	DestinationPeer      string
	DestinationName      string
	Datacenter           string
	LocalBindAddress     string
	LocalBindPort        int
	LocalBindSocketPath  string
	LocalBindSocketMode  string
	MeshGateway          MeshGatewayConfig
}

// structs.ConnectProxyConfig, a struct value in NodeService and ServiceNode (Config is `bexpr:"-"`)
type ConnectProxyConfig struct {
	EnvoyExtensions        []EnvoyExtension
	DestinationServiceName string
	DestinationServiceID   string
	LocalServiceAddress    string
	LocalServicePort       int
	LocalServiceSocketPath string
	Mode                   string
	Upstreams              []Upstream
	MeshGateway            MeshGatewayConfig
	Expose                 ExposeConfig
	TransparentProxy       TransparentProxyConfig
	AccessLogs             AccessLogsConfig
}

// structs.ServiceConnect (SidecarService and PeerMeta are `bexpr:"-"`)
type ServiceConnect struct {
	Native bool
}

// structs.NodeService (Locality, LocallyRegisteredAsSidecar, EnterpriseMeta, RaftIndex are `bexpr:"-"`)
type NodeService struct {
	Kind              string
	ID                string
	Service           string
	Tags              []string
	Address           string
	TaggedAddresses   map[string]ServiceAddress
	Meta              map[string]string
	Port              int
	SocketPath        string
	Weights           *Weights
	EnableTagOverride bool
	Proxy             ConnectProxyConfig
	Connect           ServiceConnect
	PeerName          string
}

// structs.ServiceNode (ServiceLocality, EnterpriseMeta, RaftIndex are `bexpr:"-"`)
type ServiceNode struct {
	ID                       string
	Node                     string
	Address                  string
	Datacenter               string
	TaggedAddresses          map[string]string
	NodeMeta                 map[string]string
	ServiceKind              string
	ServiceID                string
	ServiceName              string
	ServiceTags              []string
	ServiceAddress           string
	ServiceTaggedAddresses   map[string]ServiceAddress
	ServiceWeights           Weights
	ServiceMeta              map[string]string
	ServicePort              int
	ServiceSocketPath        string
	ServiceEnableTagOverride bool
	ServiceProxy             ConnectProxyConfig
	ServiceConnect           ServiceConnect
	PeerName                 string
}

// structs.CheckServiceNode: what /v1/health/service/:name filters (a slice of values).
type CheckServiceNode struct {
	Node    *Node
	Service *NodeService
	Checks  []*HealthCheck
}
