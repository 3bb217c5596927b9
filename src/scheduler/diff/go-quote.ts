/**
 * Go's `%q` of a string, for error texts that must match Nomad's, rendered
 * with JSON string escaping (the same for printable text; Go escapes control
 * characters differently, e.g. `\x01` where JSON writes `\u0001`). A Go-compat
 * helper.
 */

export function goQuote(s: string): string {
  return JSON.stringify(s);
}
