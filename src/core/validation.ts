/**
 * Turning validation issues (valibot) into messages that name the path of
 * the bad value: `scheduler.nodes[1].Name: Invalid type: Expected string but received 5`,
 * `scheduler.nodez: unknown key`. Shared by fixtures, snapshots and the control API.
 */
import * as v from "valibot";

export type Issues = readonly v.BaseIssue<unknown>[];

export function describeIssues(issues: Issues): string[] {
  return boundProblems(
    issues.map((issue) => {
      const path = formatPath((issue.path ?? []).map((item) => item.key as PropertyKey));
      if (issue.type === "strict_object" && issue.expected === "never") return { text: `${path}: unknown key`, unknownKey: true };
      return { text: `${path || "(root)"}: ${issue.message}`, unknownKey: false };
    }),
  );
}

/** Unknown keys named one by one in an error; the rest are counted (a body of a million misspelt keys must not answer a list of them all). */
export const UNKNOWN_KEYS_NAMED = 5;
/** Problems of any kind listed in one error; the rest are counted. */
export const PROBLEMS_LISTED = 100;

/**
 * The problems an error lists: the first {@link UNKNOWN_KEYS_NAMED} unknown
 * keys and the first {@link PROBLEMS_LISTED} problems in all, in order, then
 * a line counting what was left out. Every error about a document's keys
 * (fixtures, snapshots, control bodies, actions) goes through here, so its
 * size follows the limits, not the document's. A problem's text may be
 * given as a function, so only the listed ones are written out.
 */
export function boundProblems(problems: readonly { text: string | (() => string); unknownKey: boolean }[]): string[] {
  const listed: string[] = [];
  let unknownKeys = 0;
  let moreKeys = 0;
  let moreOthers = 0;
  for (const problem of problems) {
    if (problem.unknownKey && ++unknownKeys > UNKNOWN_KEYS_NAMED) moreKeys++;
    else if (listed.length >= PROBLEMS_LISTED) moreOthers++;
    else listed.push(typeof problem.text === "string" ? problem.text : problem.text());
  }
  if (moreKeys > 0) listed.push(`and ${moreKeys} more unknown ${moreKeys === 1 ? "key" : "keys"}`);
  if (moreOthers > 0) listed.push(`and ${moreOthers} more ${moreOthers === 1 ? "problem" : "problems"}`);
  return listed;
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
