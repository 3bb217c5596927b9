/** The timers an advance or an await fired, as `advance` has always printed them. */

export interface FiredTimer {
  at: string;
  kind: string;
  subject: string;
  detail: unknown;
}

export function firedLines(fired: readonly FiredTimer[]): string[] {
  if (fired.length === 0) return ["  (no timers fired)"];
  return fired.map((f) => `  ${f.at}  ${f.kind}  ${f.subject}${f.detail === null ? "" : `  ${JSON.stringify(f.detail)}`}`);
}
