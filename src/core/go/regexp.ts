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

/** One piece of a Go replacement template: literal text, or a group by number or by name. */
type TemplatePiece = string | number | { readonly name: string };

/**
 * Go's `Regexp.Expand` template, read once: `$1`, `${1}`, `$name`, `${name}`
 * (the longest run of letters, digits and `_`; `$1x` names group "1x"),
 * `$$` for a `$`, and a malformed reference kept as written.
 */
function readTemplate(template: string): TemplatePiece[] {
  const pieces: TemplatePiece[] = [];
  let literal = "";
  let rest = template;
  for (;;) {
    const dollar = rest.indexOf("$");
    if (dollar < 0) break;
    literal += rest.slice(0, dollar);
    rest = rest.slice(dollar + 1);
    if (rest.startsWith("$")) {
      literal += "$";
      rest = rest.slice(1);
      continue;
    }
    const ref = /^(\{)?([\p{L}\p{Nd}_]+)(\})?/u.exec(rest);
    const name = ref?.[2];
    if (ref === null || name === undefined || (ref[1] !== undefined && ref[3] === undefined)) {
      literal += "$";
      continue;
    }
    const length = ref[1] !== undefined ? name.length + 2 : name.length;
    rest = rest.slice(length);
    if (literal) pieces.push(literal);
    literal = "";
    // A number only when all ASCII digits, without a leading zero, below 1e8 (Go's extract).
    const isNumber = /^(0|[1-9][0-9]{0,7})$/.test(name);
    pieces.push(isNumber ? Number(name) : { name });
  }
  literal += rest;
  if (literal) pieces.push(literal);
  return pieces;
}

/**
 * Go's `Regexp.ReplaceAllString` on RE2 (linear time, whatever the pattern):
 * an empty match right after a previous match is not replaced, and the
 * search always moves on by at least one character. Returns undefined as
 * soon as the result would be longer than `maxLength` characters.
 */
export function goReplaceAll(re: RE2JS, src: string, template: string, maxLength: number): string | undefined {
  const pieces = readTemplate(template);
  const named = re.namedGroups();
  const groups = re.groupCount();
  const matcher = re.matcher(src);
  let out = "";
  let lastMatchEnd = 0;
  let searchPos = 0;
  while (searchPos <= src.length && matcher.find(searchPos)) {
    const start = matcher.start();
    const end = matcher.end();
    out += src.slice(lastMatchEnd, start);
    if (end > lastMatchEnd || start === 0) {
      for (const piece of pieces) {
        if (typeof piece === "string") out += piece;
        else {
          const group = typeof piece === "number" ? piece : named[piece.name];
          if (group !== undefined && group <= groups) out += matcher.group(group) ?? "";
        }
        if (out.length > maxLength) return undefined;
      }
    }
    if (out.length > maxLength) return undefined;
    lastMatchEnd = end;
    const width = (src.codePointAt(searchPos) ?? 0) > 0xffff ? 2 : 1;
    searchPos = Math.max(searchPos + width, end);
  }
  out += src.slice(lastMatchEnd);
  return out.length > maxLength ? undefined : out;
}
