/**
 * Turning validation issues (valibot) into messages that name the path of
 * the bad value: `scheduler.nodes[1].Name: Invalid type: Expected string but received 5`,
 * `scheduler.nodez: unknown key`. Shared by fixtures, snapshots and the control API.
 */
import * as v from "valibot";

export type Issues = readonly v.BaseIssue<unknown>[];

export function describeIssues(issues: Issues): string[] {
  return issues.map((issue) => {
    const path = formatPath((issue.path ?? []).map((item) => item.key as PropertyKey));
    if (issue.type === "strict_object" && issue.expected === "never") return `${path}: unknown key`;
    return `${path || "(root)"}: ${issue.message}`;
  });
}

/** `a.b[0]["odd key"]` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (typeof part === "string" && /^[A-Za-z_$][\w$]*$/.test(part)) out += out ? `.${part}` : part;
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/** A check whose failure message is the error a parser throws (e.g. Go's duration errors). */
export function parsesWith(parse: (value: string) => unknown) {
  return v.rawCheck<string>(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      parse(dataset.value);
    } catch (error) {
      addIssue({ message: (error as Error).message });
    }
  });
}
