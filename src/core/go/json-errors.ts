/**
 * encoding/json's error texts, which Nomad and Consul put in their 400s
 * verbatim: the type mismatch (`json: cannot unmarshal string into Go struct
 * field JobRevertRequest.JobVersion of type uint64`) and the scanner's
 * syntax errors (`unexpected EOF`, `invalid character 'x' looking for
 * beginning of value`), the latter derived from what V8's JSON.parse says of
 * the same document.
 *
 * Go's scanner names the context of a bad character ("after object key",
 * "in string literal", …); V8 does not say, so every bad character is
 * "looking for beginning of value". Refusals with no character to name (the
 * document stops early) are Go's `unexpected EOF`.
 */
import { goQuote } from "./strconv.js";

/** The JSON kind UnmarshalTypeError names: string, number, bool, array or object (null decodes into anything). */
export function jsonKind(value: unknown): string {
  if (Array.isArray(value)) return "array";
  switch (typeof value) {
    case "string":
      return "string";
    case "number":
      return "number";
    case "boolean":
      return "bool";
    default:
      return value === null ? "null" : "object";
  }
}

/**
 * UnmarshalTypeError's text: into a struct's field (`Struct.Field`, or the
 * path from the top struct as Go's decoder tracks it) or, with no field,
 * into a whole Go value.
 */
export function unmarshalTypeError(kind: string, goType: string, field?: string): string {
  return field === undefined ? `json: cannot unmarshal ${kind} into Go value of type ${goType}` : `json: cannot unmarshal ${kind} into Go struct field ${field} of type ${goType}`;
}

/**
 * encoding/json's quoteChar: how a syntax error names the byte it stopped at
 * (`'x'`, `'\''`, `'"'`, `'\\'`, `'\n'`, `'\x01'`). Go quotes the byte as
 * a rune, so a non-ASCII character is named by its first UTF-8 byte read
 * as Latin-1 (`é` is `'Ã'`), as Nomad and Consul print it.
 */
export function quoteChar(char: string): string {
  if (char === "'") return "'\\''";
  if (char === '"') return "'\"'";
  const byte = Buffer.from(char, "utf8")[0] ?? 0x3f;
  return `'${goQuote(String.fromCharCode(byte)).slice(1, -1)}'`;
}

/** The syntax error Go's decoder reports for `text`, which V8's JSON.parse refused with `v8Message`. */
export function syntaxError(text: string, v8Message: string): string {
  if (/Unexpected end of JSON input|Unterminated string/i.test(v8Message)) return "unexpected EOF";
  const position = /position (\d+)/.exec(v8Message)?.[1];
  // V8 reports a document that stops early (`{`) at the position past its end.
  if (position !== undefined && Number(position) >= text.length) return "unexpected EOF";
  const char = position !== undefined ? text[Number(position)] : /token '?(.)/.exec(v8Message)?.[1];
  return `invalid character ${quoteChar(char ?? "?")} looking for beginning of value`;
}

/** The scanner's refusal of a document nested past its depth limit, at the bracket that crossed it. */
export function maxDepthError(char: string): string {
  return `invalid character ${quoteChar(char)} exceeded max depth`;
}
