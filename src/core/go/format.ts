/**
 * Go's `%v` of the primitive values a diff prints: integers in decimal, floats
 * the way strconv's shortest 'g' formatting renders them.
 */

/** fmt's %v of an integer. */
function goInt(n: number): string {
  if (Math.abs(n) >= 1e21) return BigInt(n).toString();
  return String(n);
}

/** fmt's %v of a float64 (strconv 'g' with the shortest digits). */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  // Shortest round-trip digits, as both Go and JavaScript produce them.
  const [mantissa, expText] = n.toExponential().split("e") as [string, string];
  const exp = Number(expText);
  // strconv.FormatFloat(f, 'g', -1, 64): with the shortest precision, %e is
  // used when the exponent is < -4 or >= 6 (hence 1e+06, 1.5e+07, 1e-05).
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mantissa}e${exp < 0 ? "-" : "+"}${abs < 10 ? "0" : ""}${abs}`;
  }
  return String(n); // plain decimal in this range, same digits
}

/** %v of a JSON primitive sitting in a typed Go field (numbers are Go integers). */
export function fmtPrim(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") return Number.isInteger(value) ? goInt(value) : goFloat(value);
  if (typeof value === "bigint") return value.toString();
  return String(value);
}

export function isPrim(value: unknown): value is string | number | boolean | bigint {
  const t = typeof value;
  return t === "string" || t === "number" || t === "boolean" || t === "bigint";
}
