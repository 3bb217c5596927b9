/**
 * Job diffs for `PUT /v1/job/:id/plan` with `"Diff": true`: a port of Nomad's
 * `structs.Job.Diff(other, contextual)` (nomad/structs/diff.go), of the
 * `flatmap.Flatten` helper it is built on (helper/flatmap/flatmap.go) and of
 * the plan annotations the scheduler adds afterwards (scheduler/annotate.go).
 *
 * TARGET VERSION: Nomad 1.9.x. The diff.go revision read is a 1.8+/1.9-era one
 * (group `Disconnect`, job `UI`, task `Identities`, `Actions`, `Schedule`,
 * `VolumeMounts`, `Periodic.Specs`, network `CNI`); blocks a 1.9 job does not
 * carry are simply absent and produce nothing.
 *
 * Inputs are canonical `structs.Job` objects as produced by
 * `canonicalizeJob` (jobspec/): plain JSON whose keys are the Go field names.
 * Go's reflection-driven flattening is reproduced on that JSON:
 * - "primitive" flattening (`Flatten(x, filter, true)`) keeps the top level
 *   bool/int/float/string fields and the entries of `map[string]string`
 *   fields (rendered `Meta[key]`); nested structs, pointers, slices and
 *   `interface{}` values are skipped. JSON cannot tell a map from a struct or a
 *   `*int` from an `int`, so the map fields (`MAP_FIELDS`) and the pointer
 *   fields (per call site) are named explicitly;
 * - full flattening (`Flatten(x, nil, false)`, used for task driver `Config`,
 *   scaling `Policy`, check `Header`, `Disconnect`, template `Wait`) follows
 *   everything: `image`, `args[0]`, `port_map[0][http]`, nil as `"nil"`;
 * - values are rendered with Go's `%v`: integers in decimal (durations are
 *   their integer nanoseconds), booleans `true`/`false`, and numbers decoded
 *   into `interface{}` (driver config, scaling policy) as Go float64s, so
 *   `1000000` there prints `1e+06` as Go does.
 *
 * Faithful details worth knowing:
 * - the job, group and task primitive `Fields` are never contextual (Nomad
 *   passes `false` there); `contextual` only fills unchanged fields (Type
 *   "None") into object diffs (Update, Config, Resources, Service …). So two
 *   identical jobs give a "None" diff with no fields at all;
 * - Fields lists are sorted by (Name, Old, New); TaskGroups and Tasks by name;
 *   lists of like objects (constraints, services, ports …) with Nomad's
 *   `ObjectDiff.Less` (name, then Edited < Added < Deleted < None, then …);
 *   the job/group/task `Objects` lists keep Nomad's append order
 *   (Datacenters, Constraint, Affinity, Periodic, …) — they are not sorted;
 * - job fields ID, Status, StatusDescription, Version, Stable, CreateIndex,
 *   ModifyIndex, JobModifyIndex, Update, SubmitTime, NomadTokenID and
 *   VaultToken are ignored; a group or task is "Edited" whenever it differs
 *   deeply (reflect.DeepEqual), even in a block that diff.go does not diff
 *   (e.g. Spreads, Migrate, Lifecycle), in which case it has no fields;
 * - empty lists come out as `null`, like Go's nil slices.
 *
 * Known approximations:
 * - Go sorts with an unstable sort and, for lists built from maps, starts from
 *   random map order; here the input order is deterministic and Go's
 *   insertion sort (what `sort.Sort` does for up to 12 elements) is used for
 *   every list, with `ObjectDiff.Less` ported as is (including its sorting of
 *   the compared diffs' own fields and objects);
 * - `hashstructure` keys (constraints, affinities, artifacts, networks) are
 *   replaced by a canonical JSON key: equal content, equal key;
 * - group volume requests come out in name order (Go: map order);
 * - a constraint/affinity/artifact whose fields are all empty yields no
 *   object (Go appends a nil entry);
 * - `Template.DiffID()` is taken to be the destination path.
 *
 * Layout of this folder (one Go port or block per file):
 * - shapes: types.ts (wire and internal), output.ts (internal → wire);
 * - Go-compat helpers come from src/core/go (reflect.DeepEqual, %v, %q,
 *   byte order and insertion sort); here: hash-key.ts (hashstructure
 *   stand-in), values.ts (reading canonical JSON);
 * - helper/flatmap: flatmap.ts;
 * - diff.go building blocks: primitives.ts (field, set and primitive object
 *   diffs), order.ts (FieldDiff/ObjectDiff.Less), combinators.ts (the shapes
 *   the per-block diffs share);
 * - levels: job.ts (+ job-blocks.ts), task-group.ts (+ group-blocks.ts),
 *   task.ts (+ templates.ts);
 * - blocks used at several levels: network.ts, resources.ts, services.ts,
 *   connect.ts, gateway.ts, identity.ts;
 * - scheduler/annotate.go: annotate.ts.
 */

export { annotateTaskDiffs, ANNOTATION_FORCES_CREATE, ANNOTATION_FORCES_DESTROY, ANNOTATION_FORCES_DESTRUCTIVE_UPDATE, ANNOTATION_FORCES_INPLACE_UPDATE } from "./annotate.js";
export type { DesiredUpdates } from "./annotate.js";
export { jobDiff } from "./job.js";
export type { DiffType, FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from "./types.js";
