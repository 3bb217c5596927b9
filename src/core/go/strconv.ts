/**
 * Go's strconv as go-bexpr's messages and coercions need it: Quote (how Go prints a string in an error),
 * ParseBool, ParseInt(s, 0, 64), ParseUint(s, 0, 64) and ParseFloat(s, 64), with their error texts
 * (`strconv.ParseInt: parsing "x": invalid syntax`). Integers come back as BigInt so that the whole
 * int64/uint64 range compares exactly. (strconv.Unquote, which only the grammar uses, is in
 * grammar/unquote.ts.)
 */

/** strconv.Quote (also what `%q` and `%#v` print for a string) */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp === 0x22) out += '\\"';
    else if (cp === 0x5c) out += "\\\\";
    else if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp < 0x80) {
      const esc: Record<number, string> = { 7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r" };
      out += esc[cp] ?? `\\x${cp.toString(16).padStart(2, "0")}`;
    } else if (cp >= 0xd800 && cp <= 0xdfff) out += "\\ufffd";
    else if (/^[\p{L}\p{M}\p{N}\p{P}\p{S}]$/u.test(ch)) out += ch;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += `\\U${cp.toString(16).padStart(8, "0")}`;
  }
  return `${out}"`;
}

export type Coerced = { ok: true; v: unknown } | { ok: false; msg: string; syntax: boolean };

function numError(fn: string, s: string, syntax: boolean): Coerced {
  return { ok: false, msg: `strconv.${fn}: parsing ${goQuote(s)}: ${syntax ? "invalid syntax" : "value out of range"}`, syntax };
}

export function goParseBool(s: string): Coerced {
  if (["1", "t", "T", "TRUE", "true", "True"].includes(s)) return { ok: true, v: true };
  if (["0", "f", "F", "FALSE", "false", "False"].includes(s)) return { ok: true, v: false };
  return numError("ParseBool", s, true);
}

/** Go's underscoreOK: underscores only between digits (a base prefix counts as a digit). */
function underscoreOK(s0: string): boolean {
  let s = s0;
  let saw = "^";
  let i = 0;
  if (s.length >= 1 && (s[0] === "-" || s[0] === "+")) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === "0" && "box".includes(s[1]!.toLowerCase())) {
    i = 2;
    saw = "0";
    hex = s[1]!.toLowerCase() === "x";
  }
  for (; i < s.length; i++) {
    const c = s[i]!;
    if ((c >= "0" && c <= "9") || (hex && c.toLowerCase() >= "a" && c.toLowerCase() <= "f")) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

/** strconv.ParseInt(s, 0, 64), as a BigInt */
export function goParseInt(s0: string): Coerced {
  if (s0 === "") return numError("ParseInt", s0, true);
  let s = s0;
  let neg = false;
  if (s[0] === "+") s = s.slice(1);
  else if (s[0] === "-") {
    neg = true;
    s = s.slice(1);
  }
  // ParseUint(s, 0, 64)
  if (s === "") return numError("ParseInt", s0, true);
  const u = s;
  let base = 10n;
  if (s[0] === "0") {
    const p = s.length >= 3 ? s[1]!.toLowerCase() : "";
    if (p === "b") [base, s] = [2n, s.slice(2)];
    else if (p === "o") [base, s] = [8n, s.slice(2)];
    else if (p === "x") [base, s] = [16n, s.slice(2)];
    else [base, s] = [8n, s.slice(1)];
  }
  const maxU = (1n << 64n) - 1n;
  let n = 0n;
  let underscores = false;
  for (const c of s) {
    let d: bigint;
    const lc = c.toLowerCase();
    if (c === "_") {
      underscores = true;
      continue;
    } else if (c >= "0" && c <= "9") d = BigInt(c.charCodeAt(0) - 48);
    else if (lc >= "a" && lc <= "z" && lc.length === 1) d = BigInt(lc.charCodeAt(0) - 87);
    else return numError("ParseInt", s0, true);
    if (d >= base) return numError("ParseInt", s0, true);
    n = n * base + d;
    if (n > maxU) return numError("ParseInt", s0, false);
  }
  if (underscores && !underscoreOK(u)) return numError("ParseInt", s0, true);
  const cutoff = 1n << 63n;
  if (!neg && n >= cutoff) return numError("ParseInt", s0, false);
  if (neg && n > cutoff) return numError("ParseInt", s0, false);
  return { ok: true, v: neg ? -n : n };
}

/** strconv.ParseUint(s, 0, 64), as a BigInt: no sign allowed, the whole 64 bits */
export function goParseUint(s: string): Coerced {
  if (s === "" || s[0] === "+" || s[0] === "-") return numError("ParseUint", s, true);
  const parsed = goParseInt(s);
  if (parsed.ok) return parsed;
  // ParseInt refused it as out of range for int64: ParseUint takes up to 2^64 - 1.
  const digits = /^(0[xX][0-9a-fA-F_]+|0[bB][01_]+|0[oO]?[0-7_]+|[1-9][0-9_]*)$/.test(s) ? BigInt(s.replace(/_/g, "").replace(/^0([0-7])/, "0o$1")) : undefined;
  if (digits !== undefined && digits <= (1n << 64n) - 1n) return { ok: true, v: digits };
  return numError("ParseUint", s, digits === undefined);
}

/** strconv.ParseFloat(s, 64) (decimal, hexadecimal mantissa with p exponent, inf/infinity/nan) */
export function goParseFloat(s: string): Coerced {
  const special = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (special) return { ok: true, v: special[1] === "-" ? -Infinity : Infinity };
  if (/^nan$/i.test(s)) return { ok: true, v: NaN };
  const D = "[0-9](?:_?[0-9])*";
  const H = "[0-9a-fA-F](?:_?[0-9a-fA-F])*";
  const dec = new RegExp(`^[+-]?(?:${D}(?:\\.(?:${D})?)?|\\.${D})(?:[eE][+-]?${D})?$`);
  const hexf = new RegExp(`^([+-]?)0[xX]_?(?:(${H})(?:\\.(${H})?)?|\\.(${H}))[pP]([+-]?${D})$`);
  let v: number;
  if (dec.test(s)) {
    v = Number(s.replaceAll("_", ""));
  } else {
    const m = hexf.exec(s);
    if (!m) return numError("ParseFloat", s, true);
    const intPart = (m[2] ?? "").replaceAll("_", "");
    const frac = (m[3] ?? m[4] ?? "").replaceAll("_", "");
    const mant = BigInt(`0x${intPart + frac || "0"}`);
    const exp = Number(m[5]!.replaceAll("_", "")) - 4 * frac.length;
    v = Number(mant) * 2 ** exp;
    if (m[1] === "-") v = -v;
  }
  if (!Number.isFinite(v)) return numError("ParseFloat", s, false);
  return { ok: true, v };
}
