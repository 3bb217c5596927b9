/**
 * The Go `api.*` structs a Nomad job file decodes into, with their HCL tags:
 * for every struct, its JSON fields in Go declaration order (the order Nomad
 * encodes them), each as `Field type hclName kind`.
 *
 * Types: `str`/`int`/`bool`/`dur` (time.Duration, integer nanoseconds) are Go
 * values whose zero is emitted when unset; a leading `?` marks a Go pointer,
 * emitted as null when unset. `strs`/`ints` are lists, `strmap`/`anymap`/
 * `strlistmap` maps (null when unset), `bytes` a []byte, `list:T` a repeated
 * block, `one:T` an optional single block, `labelmap:T` blocks keyed by label.
 * Kinds: `attr` (optional argument), `req` (required argument), `block`,
 * `label` (the block's label), `-` (not settable from HCL). gohcl requires
 * only a non-pointer field without `optional` (gohcl/schema.go), so a `?`
 * field is never `req` even when its tag lacks `optional`
 * (ChangeScript.fail_on_error, WaitConfig.min). A trailing `omitempty`
 * marks a field whose `json` tag says so: Nomad's encoder leaves it out when
 * unset instead of writing null (Task.CSIPluginConfig).
 *
 * Transcribed from the `hcl:"…"` and `json:"…"` tags of api/jobs.go,
 * api/tasks.go, api/resources.go, api/services.go, api/consul.go,
 * api/scaling.go and api/csi.go at Nomad v1.9.7, field for field: the HCL
 * oracle (test/conformance/oracle-hcl.test.ts) compares what `POST
 * /v1/jobs/parse` writes from this table with what Nomad's own encoder
 * writes for those structs.
 */

export type FieldKind = "attr" | "req" | "block" | "label" | "-";

export interface FieldSpec {
  /** The Go field name, i.e. the JSON key. */
  readonly field: string;
  readonly type: string;
  /** The HCL argument or block name ("" when not settable). */
  readonly hcl: string;
  readonly kind: FieldKind;
  /** The `json` tag says `omitempty`: left out of the JSON when unset. */
  readonly omitEmpty: boolean;
}

const TABLE: Readonly<Record<string, string>> = {
  Job: `Region ?str region attr; Namespace ?str namespace attr; ID ?str id attr; Name ?str name attr; Type ?str type attr; Priority ?int priority attr; AllAtOnce ?bool all_at_once attr; Datacenters strs datacenters attr; NodePool ?str node_pool attr; Constraints list:Constraint constraint block; Affinities list:Affinity affinity block; TaskGroups list:TaskGroup group block; Update one:UpdateStrategy update block; Multiregion one:Multiregion multiregion block; Spreads list:Spread spread block; Periodic one:PeriodicConfig periodic block; ParameterizedJob one:ParameterizedJobConfig parameterized block; Reschedule one:ReschedulePolicy reschedule block; Migrate one:MigrateStrategy migrate block; Meta strmap meta block; ConsulToken ?str consul_token attr; VaultToken ?str vault_token attr; UI one:JobUIConfig ui block; Stop ?bool _ -; ParentID ?str _ -; Dispatched bool _ -; DispatchIdempotencyToken ?str _ -; Payload bytes _ -; ConsulNamespace ?str _ -; VaultNamespace ?str _ -; NomadTokenID ?str _ -; Status ?str _ -; StatusDescription ?str _ -; Stable ?bool _ -; Version ?int _ -; SubmitTime ?int _ -; CreateIndex ?int _ -; ModifyIndex ?int _ -; JobModifyIndex ?int _ -; VersionTag one:JobVersionTag _ -`,
  TaskGroup: `Name ?str name label; Count ?int count attr; Constraints list:Constraint constraint block; Affinities list:Affinity affinity block; Tasks list:Task task block; Spreads list:Spread spread block; Volumes labelmap:VolumeRequest volume block; RestartPolicy one:RestartPolicy restart block; Disconnect one:DisconnectStrategy disconnect block; ReschedulePolicy one:ReschedulePolicy reschedule block; EphemeralDisk one:EphemeralDisk ephemeral_disk block; Update one:UpdateStrategy update block; Migrate one:MigrateStrategy migrate block; Networks list:NetworkResource network block; Meta strmap meta block; Services list:Service service block; ShutdownDelay ?dur shutdown_delay attr; StopAfterClientDisconnect ?dur stop_after_client_disconnect attr; MaxClientDisconnect ?dur max_client_disconnect attr; Scaling one:ScalingPolicy scaling block; Consul one:Consul consul block; PreventRescheduleOnLost ?bool prevent_reschedule_on_lost attr`,
  Task: `Name str name label; Driver str driver attr; User str user attr; Lifecycle one:TaskLifecycle lifecycle block; Config anymap config block; Constraints list:Constraint constraint block; Affinities list:Affinity affinity block; Env strmap env block; Services list:Service service block; Resources one:Resources resources block; RestartPolicy one:RestartPolicy restart block; Meta strmap meta block; KillTimeout ?dur kill_timeout attr; LogConfig one:LogConfig logs block; Artifacts list:TaskArtifact artifact block; Vault one:Vault vault block; Consul one:Consul consul block; Templates list:Template template block; DispatchPayload one:DispatchPayloadConfig dispatch_payload block; VolumeMounts list:VolumeMount volume_mount block; CSIPluginConfig one:TaskCSIPluginConfig csi_plugin block omitempty; Leader bool leader attr; ShutdownDelay dur shutdown_delay attr; KillSignal str kill_signal attr; Kind str kind attr; ScalingPolicies list:ScalingPolicy scaling block; Identity one:WorkloadIdentity _ -; Identities list:WorkloadIdentity identity block; Actions list:Action action block; Schedule one:TaskSchedule schedule block`,
  Constraint: `LTarget str attribute attr; RTarget str value attr; Operand str operator attr`,
  Affinity: `LTarget str attribute attr; RTarget str value attr; Operand str operator attr; Weight ?int weight attr`,
  Spread: `Attribute str attribute attr; Weight ?int weight attr; SpreadTarget list:SpreadTarget target block`,
  SpreadTarget: `Value str _ label; Percent int percent attr`,
  UpdateStrategy: `Stagger ?dur stagger attr; MaxParallel ?int max_parallel attr; HealthCheck ?str health_check attr; MinHealthyTime ?dur min_healthy_time attr; HealthyDeadline ?dur healthy_deadline attr; ProgressDeadline ?dur progress_deadline attr; Canary ?int canary attr; AutoRevert ?bool auto_revert attr; AutoPromote ?bool auto_promote attr`,
  Multiregion: `Strategy one:MultiregionStrategy strategy block; Regions list:MultiregionRegion region block`,
  MultiregionStrategy: `MaxParallel ?int max_parallel attr; OnFailure ?str on_failure attr`,
  MultiregionRegion: `Name str _ label; Count ?int count attr; Datacenters strs datacenters attr; NodePool str node_pool attr; Meta strmap meta block`,
  PeriodicConfig: `Enabled ?bool enabled attr; Spec ?str cron attr; Specs strs crons attr; SpecType ?str _ -; ProhibitOverlap ?bool prohibit_overlap attr; TimeZone ?str time_zone attr`,
  ParameterizedJobConfig: `Payload str payload attr; MetaRequired strs meta_required attr; MetaOptional strs meta_optional attr`,
  ReschedulePolicy: `Attempts ?int attempts attr; Interval ?dur interval attr; Delay ?dur delay attr; DelayFunction ?str delay_function attr; MaxDelay ?dur max_delay attr; Unlimited ?bool unlimited attr`,
  MigrateStrategy: `MaxParallel ?int max_parallel attr; HealthCheck ?str health_check attr; MinHealthyTime ?dur min_healthy_time attr; HealthyDeadline ?dur healthy_deadline attr`,
  JobUIConfig: `Description str description attr; Links list:JobUILink link block`,
  JobUILink: `Label str label attr; URL str url attr`,
  RestartPolicy: `Interval ?dur interval attr; Attempts ?int attempts attr; Delay ?dur delay attr; Mode ?str mode attr; RenderTemplates ?bool render_templates attr`,
  DisconnectStrategy: `LostAfter ?dur lost_after attr; StopOnClientAfter ?dur stop_on_client_after attr; Replace ?bool replace attr; Reconcile ?str reconcile attr`,
  EphemeralDisk: `Sticky ?bool sticky attr; Migrate ?bool migrate attr; SizeMB ?int size attr`,
  VolumeRequest: `Name str name label; Type str type attr; Source str source attr; ReadOnly bool read_only attr; AccessMode str access_mode attr; AttachmentMode str attachment_mode attr; MountOptions one:CSIMountOptions mount_options block; PerAlloc bool per_alloc attr`,
  CSIMountOptions: `FSType str fs_type attr; MountFlags strs mount_flags attr`,
  NetworkResource: `Mode str mode attr; Device str device attr; CIDR str cidr attr; IP str ip attr; DNS one:DNSConfig dns block; ReservedPorts list:Port reserved_ports block; DynamicPorts list:Port port block; Hostname str hostname attr; MBits ?int mbits attr; CNI one:CNIConfig cni block`,
  Port: `Label str _ label; Value int static attr; To int to attr; HostNetwork str host_network attr; IgnoreCollision bool ignore_collision attr`,
  DNSConfig: `Servers strs servers attr; Searches strs searches attr; Options strs options attr`,
  CNIConfig: `Args strmap args attr`,
  Service: `Name str name attr; Tags strs tags attr; CanaryTags strs canary_tags attr; EnableTagOverride bool enable_tag_override attr; PortLabel str port attr; AddressMode str address_mode attr; Address str address attr; Checks list:ServiceCheck check block; CheckRestart one:CheckRestart check_restart block; Connect one:ConsulConnect connect block; Meta strmap meta block; CanaryMeta strmap canary_meta block; TaggedAddresses strmap tagged_addresses block; TaskName str task attr; OnUpdate str on_update attr; Identity one:WorkloadIdentity identity block; Weights one:ServiceWeights weights block; Provider str provider attr; Cluster str cluster attr`,
  ServiceCheck: `Name str name attr; Type str type attr; Command str command attr; Args strs args attr; Path str path attr; Protocol str protocol attr; PortLabel str port attr; Expose bool expose attr; AddressMode str address_mode attr; Advertise str advertise attr; Interval dur interval attr; Timeout dur timeout attr; InitialStatus str initial_status attr; Notes str notes attr; TLSServerName str tls_server_name attr; TLSSkipVerify bool tls_skip_verify attr; Header strlistmap header block; Method str method attr; CheckRestart one:CheckRestart check_restart block; GRPCService str grpc_service attr; GRPCUseTLS bool grpc_use_tls attr; TaskName str task attr; SuccessBeforePassing int success_before_passing attr; FailuresBeforeCritical int failures_before_critical attr; FailuresBeforeWarning int failures_before_warning attr; Body str body attr; OnUpdate str on_update attr`,
  CheckRestart: `Limit int limit attr; Grace ?dur grace attr; IgnoreWarnings bool ignore_warnings attr`,
  ConsulConnect: `Native bool native attr; Gateway one:ConsulGateway gateway block; SidecarService one:ConsulSidecarService sidecar_service block; SidecarTask one:SidecarTask sidecar_task block`,
  ConsulSidecarService: `Tags strs tags attr; Port str port attr; Proxy one:ConsulProxy proxy block; DisableDefaultTCPCheck bool disable_default_tcp_check attr; Meta strmap meta block`,
  ConsulProxy: `LocalServiceAddress str local_service_address attr; LocalServicePort int local_service_port attr; Expose one:ConsulExposeConfig expose block; ExposeConfig one:ConsulExposeConfig _ -; Upstreams list:ConsulUpstream upstreams block; TransparentProxy one:ConsulTransparentProxy transparent_proxy block; Config anymap config block`,
  ConsulUpstream: `DestinationName str destination_name attr; DestinationNamespace str destination_namespace attr; DestinationPeer str destination_peer attr; DestinationPartition str destination_partition attr; DestinationType str destination_type attr; LocalBindPort int local_bind_port attr; Datacenter str datacenter attr; LocalBindAddress str local_bind_address attr; LocalBindSocketPath str local_bind_socket_path attr; LocalBindSocketMode str local_bind_socket_mode attr; MeshGateway one:ConsulMeshGateway mesh_gateway block; Config anymap config block`,
  ConsulMeshGateway: `Mode str mode attr`,
  ConsulExposeConfig: `Paths list:ConsulExposePath path block; Path list:ConsulExposePath _ -`,
  ConsulExposePath: `Path str path attr; Protocol str protocol attr; LocalPathPort int local_path_port attr; ListenerPort str listener_port attr`,
  ConsulTransparentProxy: `UID str uid attr; OutboundPort int outbound_port attr; ExcludeInboundPorts strs exclude_inbound_ports attr; ExcludeOutboundPorts ints exclude_outbound_ports attr; ExcludeOutboundCIDRs strs exclude_outbound_cidrs attr; ExcludeUIDs strs exclude_uids attr; NoDNS bool no_dns attr`,
  SidecarTask: `Name str name attr; Driver str driver attr; User str user attr; Config anymap config block; Env strmap env block; Resources one:Resources resources block; Meta strmap meta block; KillTimeout ?dur kill_timeout attr; LogConfig one:LogConfig logs block; ShutdownDelay ?dur shutdown_delay attr; KillSignal str kill_signal attr; VolumeMounts list:VolumeMount volume_mount block`,
  ConsulGateway: `Proxy one:ConsulGatewayProxy proxy block; Ingress one:ConsulIngressConfigEntry ingress block; Terminating one:ConsulTerminatingConfigEntry terminating block; Mesh one:ConsulMeshConfigEntry mesh block`,
  Resources: `CPU ?int cpu attr; Cores ?int cores attr; MemoryMB ?int memory attr; MemoryMaxMB ?int memory_max attr; DiskMB ?int disk attr; Networks list:NetworkResource network block; Devices list:RequestedDevice device block; NUMA one:NUMAResource numa block; SecretsMB ?int secrets attr; IOPS ?int iops attr`,
  RequestedDevice: `Name str _ label; Count ?int count attr; Constraints list:Constraint constraint block; Affinities list:Affinity affinity block`,
  NUMAResource: `Affinity str affinity attr; Devices strs devices attr`,
  LogConfig: `MaxFiles ?int max_files attr; MaxFileSizeMB ?int max_file_size attr; Enabled ?bool enabled attr; Disabled ?bool disabled attr`,
  TaskArtifact: `GetterSource ?str source attr; GetterOptions strmap options block; GetterHeaders strmap headers block; GetterMode ?str mode attr; GetterInsecure ?bool insecure attr; RelativeDest ?str destination attr; Chown bool chown attr`,
  Template: `SourcePath ?str source attr; DestPath ?str destination attr; EmbeddedTmpl ?str data attr; ChangeMode ?str change_mode attr; ChangeScript one:ChangeScript change_script block; ChangeSignal ?str change_signal attr; Splay ?dur splay attr; Perms ?str perms attr; Uid ?int uid attr; Gid ?int gid attr; LeftDelim ?str left_delimiter attr; RightDelim ?str right_delimiter attr; Envvars ?bool env attr; VaultGrace ?dur vault_grace attr; Wait one:WaitConfig wait block; ErrMissingKey ?bool error_on_missing_key attr`,
  ChangeScript: `Command ?str command attr; Args strs args attr; Timeout ?dur timeout attr; FailOnError ?bool fail_on_error attr`,
  WaitConfig: `Min ?dur min attr; Max ?dur max attr`,
  Vault: `Policies strs policies attr; Role str role attr; Namespace ?str namespace attr; Cluster str cluster attr; Env ?bool env attr; DisableFile ?bool disable_file attr; ChangeMode ?str change_mode attr; ChangeSignal ?str change_signal attr; AllowTokenExpiration ?bool allow_token_expiration attr`,
  Consul: `Namespace str namespace attr; Cluster str cluster attr; Partition str partition attr`,
  TaskLifecycle: `Hook str hook attr; Sidecar bool sidecar attr`,
  DispatchPayloadConfig: `File str file attr`,
  VolumeMount: `Volume ?str volume attr; Destination ?str destination attr; ReadOnly ?bool read_only attr; PropagationMode ?str propagation_mode attr; SELinuxLabel ?str selinux_label attr`,
  TaskCSIPluginConfig: `ID str id attr; Type str type attr; MountDir str mount_dir attr; StagePublishBaseDir str stage_publish_base_dir attr; HealthTimeout dur health_timeout attr`,
  ScalingPolicy: `Min ?int min attr; Max ?int max attr; Policy anymap policy block; Enabled ?bool enabled attr; Type str type attr; ID str _ -; Namespace str _ -; Target strmap _ -; CreateIndex int _ -; ModifyIndex int _ -`,
  WorkloadIdentity: `Name str name attr; Audience strs aud attr; ChangeMode str change_mode attr; ChangeSignal str change_signal attr; Env bool env attr; File bool file attr; Filepath str filepath attr; ServiceName str service_name attr; TTL dur ttl attr`,
  Action: `Name str name label; Command str command req; Args strs args attr`,
  TaskSchedule: `Cron one:TaskScheduleCron cron block`,
  TaskScheduleCron: `Start str start attr; End str end attr; Timezone str timezone attr`,
  ServiceWeights: `Passing int passing attr; Warning int warning attr`,
  ConsulGatewayProxy: `ConnectTimeout ?dur connect_timeout attr; EnvoyGatewayBindTaggedAddresses bool envoy_gateway_bind_tagged_addresses attr; EnvoyGatewayBindAddresses labelmap:ConsulGatewayBindAddress envoy_gateway_bind_addresses block; EnvoyGatewayNoDefaultBind bool envoy_gateway_no_default_bind attr; EnvoyDNSDiscoveryType str envoy_dns_discovery_type attr; Config anymap config block`,
  ConsulIngressConfigEntry: `TLS one:ConsulGatewayTLSConfig tls block; Listeners list:ConsulIngressListener listener block`,
  ConsulTerminatingConfigEntry: `Services list:ConsulLinkedService service block`,
  ConsulMeshConfigEntry: ``,
  ConsulGatewayBindAddress: `Name str _ label; Address str address attr; Port int port attr`,
  ConsulGatewayTLSConfig: `Enabled bool enabled attr; TLSMinVersion str tls_min_version attr; TLSMaxVersion str tls_max_version attr; CipherSuites strs cipher_suites attr; SDS one:ConsulGatewayTLSSDSConfig sds block`,
  ConsulIngressListener: `Port int port attr; Protocol str protocol attr; Services list:ConsulIngressService service block`,
  ConsulIngressService: `Name str name attr; Hosts strs hosts attr; TLS one:ConsulGatewayTLSConfig tls block; RequestHeaders one:ConsulHTTPHeaderModifiers request_headers block; ResponseHeaders one:ConsulHTTPHeaderModifiers response_headers block; MaxConnections ?int max_connections attr; MaxPendingRequests ?int max_pending_requests attr; MaxConcurrentRequests ?int max_concurrent_requests attr`,
  ConsulLinkedService: `Name str name attr; CAFile str ca_file attr; CertFile str cert_file attr; KeyFile str key_file attr; SNI str sni attr`,
  ConsulHTTPHeaderModifiers: `Add strmap add block; Set strmap set block; Remove strs remove attr`,
  ConsulGatewayTLSSDSConfig: `ClusterName str cluster_name attr; CertResource str cert_resource attr`,
  JobVersionTag: `Name str _ -; Description str _ -; TaggedTime int _ -`,
};

const parsed = new Map<string, readonly FieldSpec[]>();

/** The fields of one api struct, in Go order. */
export function structFields(name: string): readonly FieldSpec[] {
  const cached = parsed.get(name);
  if (cached) return cached;
  const row = TABLE[name];
  if (row === undefined) throw new Error(`no api struct ${name}`);
  const fields = row
    .split(";")
    .map((f) => f.trim())
    .filter(Boolean)
    .map((f) => {
      const [field = "", type = "", hcl = "", kind = "-", tag = ""] = f.split(" ");
      return { field, type, hcl: hcl === "_" ? "" : hcl, kind: kind as FieldKind, omitEmpty: tag === "omitempty" };
    });
  parsed.set(name, fields);
  return fields;
}

/** The value Go's encoder writes for an unset field of this type: the zero of a value type, null for pointers, slices and maps. */
export function zeroValue(type: string): unknown {
  switch (type) {
    case "str":
      return "";
    case "int":
    case "dur":
      return 0;
    case "bool":
      return false;
    default:
      return null;
  }
}

/** A struct as Go's encoder writes a new, empty one: every field at its zero, `omitempty` fields left out. */
export function zeroStruct(name: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of structFields(name)) if (!f.omitEmpty) out[f.field] = zeroValue(f.type);
  return out;
}
