/**
 * Go's `%q` of a string, for error texts that must match Nomad's byte for byte
 * (JSON string escaping gives the same result for the IDs and values quoted
 * here). A Go-compat helper.
 */

export function goQuote(s: string): string {
  return JSON.stringify(s);
}
