/**
 * The shapes of a job diff: the wire types `PUT /v1/job/:id/plan` returns
 * (Nomad's structs.JobDiff, TaskGroupDiff, TaskDiff, ObjectDiff, FieldDiff,
 * with Go's nil slices as `null`) and the mutable internal representation the
 * diff functions build before `output.ts` converts it.
 */

export type Obj = Record<string, unknown>;
export type Flat = Map<string, string>;

export type DiffType = "None" | "Added" | "Deleted" | "Edited";

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

// ---------------------------------------------------------------------------
// Internal (mutable, arrays never null) representation

export interface FD {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface OD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
}

export interface TD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
}

export interface TGD {
  Type: DiffType;
  Name: string;
  Fields: FD[];
  Objects: OD[];
  Tasks: TD[];
}
