/**
 * The job fields the server sets, not the client: canonicalization writes
 * them with these values and the spec comparison ignores them.
 */

/** Server-set fields and their values before the state store writes the job. */
export const SERVER_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({
  Status: "pending",
  StatusDescription: "",
  Stable: false,
  Version: 0,
  SubmitTime: 0,
  CreateIndex: 0,
  ModifyIndex: 0,
  JobModifyIndex: 0,
});
