/**
 * A parity report opened in the dashboard (`standin ui --parity`): the JSON
 * `standin parity --json` wrote, checked only for what the page reads of it.
 */
import * as v from "valibot";
import { ControlError } from "../control/errors.js";
import { describeIssues } from "../core/validation.js";
import { PARITY_REPORT_FORMAT, PARITY_REPORT_VERSION } from "../parity/compare/report-format.js";

const reportShape = v.looseObject({
  format: v.literal(PARITY_REPORT_FORMAT),
  version: v.literal(PARITY_REPORT_VERSION),
  summary: v.looseObject({ exchanges: v.number() }),
  differences: v.array(v.looseObject({ seq: v.number(), kind: v.string(), at: v.string() })),
  exchanges: v.array(v.looseObject({ seq: v.number(), method: v.string(), path: v.string(), sentMs: v.number(), differences: v.number() })),
});

export function checkParityReport(document: unknown): unknown {
  const parsed = v.safeParse(reportShape, document);
  if (!parsed.success) throw new ControlError(400, `not a parity report (standin parity --json): ${describeIssues(parsed.issues).slice(0, 3).join("; ")}`);
  return document;
}
