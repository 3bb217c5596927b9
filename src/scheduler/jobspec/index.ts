/**
 * Job specifications for the scheduler service: decoding, canonicalization,
 * validation and spec comparison, the way a Nomad server does them.
 *
 * TARGET VERSION: Nomad 1.9.x (Community Edition). Where releases differ, this
 * module follows 1.9:
 * - the job carries `UI` and `VersionTag` (1.9+); task groups carry
 *   `Disconnect` (1.8+) next to the deprecated `StopAfterClientDisconnect`,
 *   `MaxClientDisconnect` and `PreventRescheduleOnLost`; tasks carry
 *   `Identity`/`Identities` (a default workload identity is always added),
 *   `Actions` and `Schedule`; resources carry `NUMA` (1.7+) and `SecretsMB`,
 *   services `Weights`, identities `Filepath` (all in 1.9.7's structs, checked
 *   by the wire-shape oracle). A check's `Advertise` is decoded but dropped:
 *   it is api-only (structs.ServiceCheck has no such field).
 * - `Datacenters` defaults to `["*"]` and `NodePool` to `"default"` (1.6+),
 *   so "Missing job datacenters" cannot happen for canonicalized jobs.
 * - the priority range is checked by the job-validate admission hook with the
 *   lower-case text `job priority must be between [1, 100]`, appended after
 *   the errors of `structs.Job.Validate` (1.5+ behaviour).
 *
 * The pipeline mirrors a real `PUT /v1/jobs`, one step per module:
 * 1. `encoding/json` decodes the body into `api.Job` (keys matched
 *    case-insensitively, unknown keys ignored, first type error reported in
 *    Go's words) — decode.ts, driven by the `api.*` schemas in schema.ts;
 * 2. `api.Job.Canonicalize` fills client-side defaults and
 *    `ApiJobToStructJob` converts to `structs.Job`, dropping what the server
 *    does not keep (job-level update keeps only Stagger/MaxParallel; the
 *    tokens are blanked as the register RPC does) — canonicalize/ (job.ts,
 *    then group.ts, task.ts, services.ts and the shared blocks.ts);
 * 3. the admission mutators run `structs.Job.Canonicalize` (priority 0 → 50,
 *    `Datacenters` `["*"]`, node pool `default`, default identity, restart /
 *    reschedule / migrate defaults, service and check names) and add the
 *    implied constraints (Vault, signals, Nomad/Consul services) —
 *    canonicalize/defaults.ts and canonicalize/implied-constraints.ts; the
 *    Connect sidecar and expose-check mutators are not emulated;
 * 4. the admission validators run `structs.Job.Validate` plus the hook checks
 *    — validate/ (job.ts down to task.ts), whose result `formatMultierror`
 *    (multierror.ts) renders.
 * admit.ts runs the four steps as the one admission path; compare.ts decides
 * whether a re-registered job is a new version.
 *
 * Sources read (hashicorp/nomad): api/jobs.go, api/tasks.go, api/resources.go,
 * api/consul.go, api/services.go, command/agent/job_endpoint.go (1.8),
 * nomad/job_endpoint_hooks.go, nomad/structs/structs.go (1.9/1.10 era),
 * nomad/structs/services.go, nomad/structs/workload_id.go,
 * nomad/structs/group.go, nomad/structs/numa.go; hashicorp/go-multierror
 * format.go and append.go.
 *
 * Known approximations (see the notes next to each):
 * - numbers arrive already parsed, so `1.0` is accepted where Go rejects it,
 *   and "number <literal>" shows JavaScript's spelling of the literal;
 * - `NetworkResource` and `Port` carry a struct-level `codec:",omitempty"`
 *   marker in Nomad, so their zero fields are left out here as well;
 * - blocks this emulator does not interpret (service `Connect`, task
 *   `Schedule`) are kept as the client sent them;
 * - scaling policy IDs are left "" (the state store assigns UUIDs);
 * - regexp/version/semver constraint targets, templates' finer rules and
 *   volume requests are not validated; a periodic job's cron specs are only
 *   checked to parse (admit.ts).
 */
export { admitJob, type AdmittedJob } from "./admit.js";
export { canonicalizeJob } from "./canonicalize/job.js";
export { specChanged } from "./compare.js";
export { JobDecodeError } from "./decode.js";
export { SERVER_FIELDS } from "./server-fields.js";
export { validateJob } from "./validate/job.js";
