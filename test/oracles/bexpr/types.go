// The typed objects Nomad filters with go-bexpr, declared here with the field names and Go kinds of
// Nomad 1.9's nomad/structs types (which are BUSL-licensed and not used: these are small
// hand-written declarations of the same shape, for the fields standin sends). go-bexpr walks Go
// values by reflection, so what matters is each field's kind: a struct or a pointer to one, a map
// or a slice (and its element kind), int vs int64 vs uint64, []byte, time.Time.
package main

import "time"

type Constraint struct {
	LTarget, RTarget, Operand string
}

type Affinity struct {
	LTarget, RTarget, Operand string
	Weight                    int8
}

type SpreadTarget struct {
	Value   string
	Percent uint8
}

type Spread struct {
	Attribute    string
	Weight       int8
	SpreadTarget []*SpreadTarget
}

type UpdateStrategy struct {
	Stagger          time.Duration
	MaxParallel      int
	HealthCheck      string
	MinHealthyTime   time.Duration
	HealthyDeadline  time.Duration
	ProgressDeadline time.Duration
	AutoRevert       bool
	AutoPromote      bool
	Canary           int
}

type PeriodicConfig struct {
	Enabled         bool
	Spec            string
	Specs           []string
	SpecType        string
	ProhibitOverlap bool
	TimeZone        string
}

type ParameterizedJobConfig struct {
	Payload      string
	MetaRequired []string
	MetaOptional []string
}

type RestartPolicy struct {
	Attempts        int
	Interval        time.Duration
	Delay           time.Duration
	Mode            string
	RenderTemplates bool
}

type ReschedulePolicy struct {
	Attempts      int
	Interval      time.Duration
	Delay         time.Duration
	DelayFunction string
	MaxDelay      time.Duration
	Unlimited     bool
}

type MigrateStrategy struct {
	MaxParallel     int
	HealthCheck     string
	MinHealthyTime  time.Duration
	HealthyDeadline time.Duration
}

type EphemeralDisk struct {
	Sticky  bool
	SizeMB  int
	Migrate bool
}

type LogConfig struct {
	MaxFiles      int
	MaxFileSizeMB int
	Disabled      bool
}

type Consul struct {
	Namespace, Cluster, Partition string
}

type WorkloadIdentity struct {
	Name         string
	Audience     []string
	ChangeMode   string
	ChangeSignal string
	Env          bool
	File         bool
	ServiceName  string
	TTL          time.Duration
}

type Port struct {
	Label       string
	Value       int
	To          int
	HostNetwork string
}

type NetworkResource struct {
	Mode          string
	Device        string
	CIDR          string
	IP            string
	Hostname      string
	MBits         int
	ReservedPorts []Port
	DynamicPorts  []Port
}

type Resources struct {
	CPU         int
	Cores       int
	MemoryMB    int
	MemoryMaxMB int
	DiskMB      int
	IOPS        int
	SecretsMB   int
	Networks    []*NetworkResource
}

type ServiceCheck struct {
	Name, Type, Command, Path, Protocol, PortLabel string
	Args                                           []string
	Interval, Timeout                              time.Duration
}

type Service struct {
	Name              string
	TaskName          string
	PortLabel         string
	AddressMode       string
	Address           string
	EnableTagOverride bool
	Tags              []string
	CanaryTags        []string
	Checks            []*ServiceCheck
	Meta              map[string]string
	CanaryMeta        map[string]string
	TaggedAddresses   map[string]string
	Namespace         string
	OnUpdate          string
	Provider          string
	Cluster           string
	Identity          *WorkloadIdentity
}

type TaskLifecycleConfig struct {
	Hook    string
	Sidecar bool
}

type DispatchPayloadConfig struct {
	File string
}

type Task struct {
	Name            string
	Driver          string
	User            string
	Config          map[string]interface{}
	Env             map[string]string
	Services        []*Service
	Consul          *Consul
	Constraints     []*Constraint
	Affinities      []*Affinity
	Resources       *Resources
	RestartPolicy   *RestartPolicy
	DispatchPayload *DispatchPayloadConfig
	Lifecycle       *TaskLifecycleConfig
	Meta            map[string]string
	KillTimeout     time.Duration
	LogConfig       *LogConfig
	Leader          bool
	ShutdownDelay   time.Duration
	KillSignal      string
	Kind            string
	Identity        *WorkloadIdentity
	Identities      []*WorkloadIdentity
}

type TaskGroup struct {
	Name                      string
	Count                     int
	Update                    *UpdateStrategy
	Migrate                   *MigrateStrategy
	Constraints               []*Constraint
	RestartPolicy             *RestartPolicy
	Tasks                     []*Task
	EphemeralDisk             *EphemeralDisk
	Meta                      map[string]string
	ReschedulePolicy          *ReschedulePolicy
	Affinities                []*Affinity
	Spreads                   []*Spread
	Networks                  []*NetworkResource
	Consul                    *Consul
	Services                  []*Service
	ShutdownDelay             *time.Duration
	StopAfterClientDisconnect *time.Duration
	MaxClientDisconnect       *time.Duration
	PreventRescheduleOnLost   bool
}

// Job is structs.Job: what GET /v1/jobs filters (the full job, not the stub).
type Job struct {
	Stop                     bool
	Region                   string
	Namespace                string
	ID                       string
	ParentID                 string
	Name                     string
	Type                     string
	Priority                 int
	AllAtOnce                bool
	Datacenters              []string
	NodePool                 string
	Constraints              []*Constraint
	Affinities               []*Affinity
	Spreads                  []*Spread
	TaskGroups               []*TaskGroup
	Update                   UpdateStrategy
	Periodic                 *PeriodicConfig
	ParameterizedJob         *ParameterizedJobConfig
	Dispatched               bool
	DispatchIdempotencyToken string
	Payload                  []byte
	Meta                     map[string]string
	ConsulToken              string
	ConsulNamespace          string
	VaultToken               string
	VaultNamespace           string
	NomadTokenID             string
	Status                   string
	StatusDescription        string
	Stable                   bool
	Version                  uint64
	SubmitTime               int64
	CreateIndex              uint64
	ModifyIndex              uint64
	JobModifyIndex           uint64
}

type AllocDeploymentStatus struct {
	Healthy     *bool
	Timestamp   time.Time
	Canary      bool
	ModifyIndex uint64
}

type TaskEvent struct {
	Type           string
	Time           int64
	Message        string
	DisplayMessage string
	Details        map[string]string
	ExitCode       int
	Signal         int
	FailsTask      bool
}

type TaskState struct {
	State       string
	Failed      bool
	Restarts    uint64
	LastRestart time.Time
	StartedAt   time.Time
	FinishedAt  time.Time
	Events      []*TaskEvent
}

type AllocatedCpuResources struct {
	CpuShares int64
}

type AllocatedMemoryResources struct {
	MemoryMB    int64
	MemoryMaxMB int64
}

type AllocatedTaskResources struct {
	Cpu      AllocatedCpuResources
	Memory   AllocatedMemoryResources
	Networks []*NetworkResource
}

type AllocatedSharedResources struct {
	Networks []*NetworkResource
	DiskMB   int64
}

type AllocatedResources struct {
	Tasks          map[string]*AllocatedTaskResources
	TaskLifecycles map[string]*TaskLifecycleConfig
	Shared         AllocatedSharedResources
}

// Allocation is structs.Allocation: what GET /v1/allocations filters.
type Allocation struct {
	ID                 string
	Namespace          string
	EvalID             string
	Name               string
	NodeID             string
	NodeName           string
	JobID              string
	Job                *Job
	TaskGroup          string
	Resources          *Resources
	AllocatedResources *AllocatedResources
	DesiredStatus      string
	DesiredDescription string
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	PreviousAllocation string
	NextAllocation     string
	DeploymentID       string
	DeploymentStatus   *AllocDeploymentStatus
	FollowupEvalID     string
	CreateIndex        uint64
	ModifyIndex        uint64
	AllocModifyIndex   uint64
	CreateTime         int64
	ModifyTime         int64
}

// Evaluation is structs.Evaluation: what GET /v1/evaluations filters.
type Evaluation struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	JobModifyIndex    uint64
	NodeID            string
	NodeModifyIndex   uint64
	DeploymentID      string
	Status            string
	StatusDescription string
	Wait              time.Duration
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	ClassEligibility  map[string]bool
	QueuedAllocations map[string]int
	SnapshotIndex     uint64
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

type DeploymentState struct {
	AutoRevert        bool
	AutoPromote       bool
	ProgressDeadline  time.Duration
	RequireProgressBy time.Time
	Promoted          bool
	PlacedCanaries    []string
	DesiredCanaries   int
	DesiredTotal      int
	PlacedAllocs      int
	HealthyAllocs     int
	UnhealthyAllocs   int
}

// Deployment is structs.Deployment: what GET /v1/deployments filters.
type Deployment struct {
	ID                 string
	Namespace          string
	JobID              string
	JobVersion         uint64
	JobModifyIndex     uint64
	JobSpecModifyIndex uint64
	JobCreateIndex     uint64
	IsMultiregion      bool
	TaskGroups         map[string]*DeploymentState
	Status             string
	StatusDescription  string
	EvalPriority       int
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
}

type DriverInfo struct {
	Attributes        map[string]string
	Detected          bool
	Healthy           bool
	HealthDescription string
	UpdateTime        time.Time
}

type DrainStrategy struct {
	Deadline         time.Duration
	IgnoreSystemJobs bool
	ForceDeadline    time.Time
	StartedAt        time.Time
}

// Node is structs.Node: what GET /v1/nodes filters.
type Node struct {
	ID                    string
	SecretID              string
	Datacenter            string
	Name                  string
	HTTPAddr              string
	TLSEnabled            bool
	Attributes            map[string]string
	Resources             *Resources
	Links                 map[string]string
	Meta                  map[string]string
	NodeClass             string
	NodePool              string
	ComputedClass         string
	DrainStrategy         *DrainStrategy
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	StatusUpdatedAt       int64
	Drivers               map[string]*DriverInfo
	CreateIndex           uint64
	ModifyIndex           uint64
}

// ServiceRegistration is structs.ServiceRegistration: what GET /v1/service/:name filters.
type ServiceRegistration struct {
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int
	CreateIndex uint64
	ModifyIndex uint64
}

type VariableLock struct {
	ID        string
	TTL       time.Duration
	LockDelay time.Duration
}

type VariableMetadata struct {
	Namespace   string
	Path        string
	Lock        *VariableLock
	CreateIndex uint64
	CreateTime  int64
	ModifyIndex uint64
	ModifyTime  int64
}

type VariableData struct {
	Data  []byte
	KeyID string
}

// VariableEncrypted is structs.VariableEncrypted: what GET /v1/vars filters. Both parts are
// embedded; go-bexpr's pointerstructure does not promote embedded fields, so selectors name them
// (`VariableMetadata.Path`). encoding/json does promote them, so the flat list JSON decodes into it.
type VariableEncrypted struct {
	VariableMetadata
	VariableData
}
