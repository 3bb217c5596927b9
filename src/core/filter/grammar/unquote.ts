/**
 * strconv.Unquote for the StringLiteral rule: a backtick raw string (carriage returns dropped) or a
 * double-quoted string with Go's escapes, decoded as UTF-8 bytes. A malformed literal still parses;
 * the action records strconv's `invalid syntax` at the literal, as go-bexpr's grammar action does.
 */
import { ok, type ActionResult } from "./peg.js";

/** strconv.Unquote for the two literal forms the grammar produces (text includes the quotes). */
export function goUnquote(text: string): ActionResult {
  const invalid: ActionResult = { v: "", err: "invalid syntax" };
  if (text.startsWith("`")) {
    return ok(text.slice(1, -1).replaceAll("\r", ""));
  }
  const body = Array.from(text.slice(1));
  // the final '"' is part of the text; the body may still end with an escaping backslash
  body.pop();
  const bytes: number[] = [];
  const pushRune = (cp: number) => bytes.push(...new TextEncoder().encode(String.fromCodePoint(cp)));
  for (let i = 0; i < body.length; ) {
    const ch = body[i]!;
    if (ch === "\n") return invalid;
    if (ch !== "\\") {
      pushRune(ch.codePointAt(0)!);
      i++;
      continue;
    }
    const c = body[i + 1];
    if (c === undefined) return invalid;
    i += 2;
    const simple: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 0x5c, '"': 0x22 };
    if (c in simple) {
      bytes.push(simple[c]!);
    } else if (c === "x" || c === "u" || c === "U") {
      const n = c === "x" ? 2 : c === "u" ? 4 : 8;
      const hex = body.slice(i, i + n).join("");
      if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) return invalid;
      i += n;
      const v = parseInt(hex, 16);
      if (c === "x") bytes.push(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return invalid;
      else pushRune(v);
    } else if (c >= "0" && c <= "7") {
      const oct = c + body.slice(i, i + 2).join("");
      if (!/^[0-7]{3}$/.test(oct)) return invalid;
      i += 2;
      const v = parseInt(oct, 8);
      if (v > 255) return invalid;
      bytes.push(v);
    } else {
      return invalid;
    }
  }
  return ok(new TextDecoder().decode(new Uint8Array(bytes)));
}
