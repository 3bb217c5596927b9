/**
 * Go's regexp: RE2 syntax and semantics (so `(?i)` works and look-arounds do
 * not), through re2js. Nomad compiles a pattern once and keeps it (the
 * constraint checker's cache; go-bexpr keeps it on the expression), so
 * patterns are kept here too, a bounded number of them.
 */
import { RE2JS } from "re2js";

/** A compiled pattern, or the text of regexp.Compile's error (`error parsing regexp: …`). */
export type GoRegexp = { readonly re: RE2JS; readonly error?: undefined } | { readonly re?: undefined; readonly error: string };

const compiled = new Map<string, GoRegexp>();
/** Distinct patterns kept (forgotten all at once past this). */
const COMPILED_PATTERNS = 1024;

export function compileGoRegexp(pattern: string): GoRegexp {
  let found = compiled.get(pattern);
  if (found === undefined) {
    try {
      found = { re: RE2JS.compile(pattern) };
    } catch (error) {
      found = { error: goRegexpError(error) };
    }
    if (compiled.size >= COMPILED_PATTERNS) compiled.clear();
    compiled.set(pattern, found);
  }
  return found;
}

/** Go's regexp/syntax error text; re2js words it the same way, except for an empty expression part. */
function goRegexpError(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return /`$/.test(msg) ? msg : `${msg}: \`\``;
}
