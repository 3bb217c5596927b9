/**
 * `yamlencode` as Nomad 1.9 has it (go-cty-yaml 1.1's `Standard.Marshal`),
 * byte for byte. go-cty-yaml asks libyaml's emitter for block collections,
 * double-quoted strings (a literal `|` block when the string holds a
 * newline), plain numbers, bools and null, and the emitter then decides the
 * final layout. That layout is what this module reproduces, written from the
 * emitter's documented rules rather than with a general YAML library (whose
 * choices of quoting, folding and sequence indentation differ):
 *
 * - two-space indentation; a sequence that is a mapping's value is not
 *   indented (`"k":` then `- item` at the key's column); an empty mapping or
 *   sequence is written in flow style, `{}` / `[]`;
 * - mapping keys in sorted order (cty iterates objects and maps sorted), each
 *   a double-quoted simple key unless it holds a line break or is longer than
 *   128 bytes, when it is written as an explicit `? key` / `: value` pair;
 * - a double-quoted string escapes what YAML cannot print (tabs, control
 *   characters, characters beyond U+FFFF, line breaks, `"` and `\`), and
 *   is folded at a space once the line passes 80 columns;
 * - a literal block needs printable text with no trailing space and no space
 *   before a line break, else the string is double-quoted; its header carries
 *   an indentation indicator when the text starts with a space or newline and
 *   a chomping indicator (`-` without a final newline, `+` with more than
 *   one);
 * - a document whose last scalar is plain (or a `|+` block) is closed with
 *   `...`, as libyaml marks an open-ended document.
 */
import type { Value } from "./value.js";
import { byUtf8, plainDecimal } from "./encoding.js";

const BEST_INDENT = 2;
const BEST_WIDTH = 80;
const MAX_SIMPLE_KEY_BYTES = 128;

const isBreak = (c: number): boolean => c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028 || c === 0x2029;

/** YAML's printable set as libyaml tests it (no tab, nothing past U+FFFD, no byte-order mark). */
function isPrintable(c: number): boolean {
  return c === 0x0a || (c >= 0x20 && c <= 0x7e) || (c >= 0xa0 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff);
}

const NAMED_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x00, "0"],
  [0x07, "a"],
  [0x08, "b"],
  [0x09, "t"],
  [0x0a, "n"],
  [0x0b, "v"],
  [0x0c, "f"],
  [0x0d, "r"],
  [0x1b, "e"],
  [0x22, '"'],
  [0x5c, "\\"],
  [0x85, "N"],
  [0xa0, "_"],
  [0x2028, "L"],
  [0x2029, "P"],
]);

function escapeOf(c: number): string {
  const named = NAMED_ESCAPES.get(c);
  if (named !== undefined) return `\\${named}`;
  const hex = c.toString(16).toUpperCase();
  if (c <= 0xff) return `\\x${hex.padStart(2, "0")}`;
  if (c <= 0xffff) return `\\u${hex.padStart(4, "0")}`;
  return `\\U${hex.padStart(8, "0")}`;
}

/** What the emitter learns from a string before choosing how to write it. */
interface StringTraits {
  readonly multiline: boolean;
  readonly blockAllowed: boolean;
  readonly bytes: number;
}

function traitsOf(s: string): StringTraits {
  const points = [...s].map((ch) => ch.codePointAt(0) ?? 0);
  let spaceBeforeBreak = false;
  let special = false;
  points.forEach((c, i) => {
    if (!isPrintable(c)) special = true;
    if (c === 0x20 && isBreak(points[i + 1] ?? -1)) spaceBeforeBreak = true;
  });
  const trailingSpace = points[points.length - 1] === 0x20;
  return {
    multiline: points.some(isBreak),
    blockAllowed: points.length > 0 && !trailingSpace && !spaceBeforeBreak && !special,
    bytes: Buffer.byteLength(s, "utf8"),
  };
}

/** Where a node sits, which decides how its collections indent and whether a string may be a block. */
interface Place {
  readonly root?: boolean;
  readonly mapping?: boolean;
  readonly simpleKey?: boolean;
}

/** The output and the emitter state its layout rules read (column, whether the line is still indentation…). */
class YamlWriter {
  private out = "";
  private column = 0;
  private whitespace = true;
  private indention = true;
  private openEnded = false;

  document(value: Value): string {
    this.node(value, -1, { root: true });
    this.indent(-1);
    if (this.openEnded) {
      this.indicator("...", true, false, false);
      this.indent(-1);
    }
    return this.out;
  }

  private put(text: string): void {
    for (const ch of text) {
      this.out += ch;
      this.column++;
    }
  }

  private newline(): void {
    this.out += "\n";
    this.column = 0;
  }

  /** Moves to `indent` on a new line unless the line so far is only indentation up to there. */
  private indent(indent: number): void {
    const target = Math.max(indent, 0);
    if (!this.indention || this.column > target || (this.column === target && !this.whitespace)) this.newline();
    while (this.column < target) this.put(" ");
    this.whitespace = true;
    this.indention = true;
  }

  private indicator(text: string, needWhitespace: boolean, isWhitespace: boolean, isIndention: boolean): void {
    if (needWhitespace && !this.whitespace) this.put(" ");
    this.put(text);
    this.whitespace = isWhitespace;
    this.indention = this.indention && isIndention;
    this.openEnded = false;
  }

  /** `indent` is the enclosing collection's indentation (-1 at the root). */
  private node(value: Value, indent: number, place: Place): void {
    if (Array.isArray(value)) this.sequence(value, indent, place);
    else if (value !== null && typeof value === "object") this.mapping(value, indent);
    else if (typeof value === "string") this.string(value, indent, place);
    else this.plain(plainText(value), place);
  }

  private sequence(items: readonly Value[], indent: number, place: Place): void {
    if (items.length === 0) {
      this.emptyFlow("[", "]");
      return;
    }
    // Inside a mapping, right after `key:`, a block sequence stays at the key's column.
    const indentless = place.mapping === true && !this.indention;
    const own = indent < 0 ? 0 : indentless ? indent : indent + BEST_INDENT;
    for (const item of items) {
      this.indent(own);
      this.indicator("-", true, false, true);
      this.node(item, own, {});
    }
  }

  private mapping(object: { readonly [key: string]: Value }, indent: number): void {
    const keys = Object.keys(object).sort(byUtf8);
    if (keys.length === 0) {
      this.emptyFlow("{", "}");
      return;
    }
    const own = indent < 0 ? 0 : indent + BEST_INDENT;
    for (const key of keys) {
      this.indent(own);
      const traits = traitsOf(key);
      if (!traits.multiline && traits.bytes <= MAX_SIMPLE_KEY_BYTES) {
        this.string(key, own, { mapping: true, simpleKey: true });
        this.indicator(":", false, false, false);
      } else {
        this.indicator("?", true, false, true);
        this.string(key, own, { mapping: true });
        this.indent(own);
        this.indicator(":", true, false, true);
      }
      this.node(object[key] ?? null, own, { mapping: true });
    }
  }

  private emptyFlow(open: string, close: string): void {
    this.indicator(open, true, true, false);
    this.indicator(close, false, false, false);
  }

  private plain(text: string, place: Place): void {
    if (!this.whitespace) this.put(" ");
    this.put(text);
    this.whitespace = false;
    this.indention = false;
    if (place.root) this.openEnded = true;
  }

  private string(s: string, indent: number, place: Place): void {
    const own = indent < 0 ? BEST_INDENT : indent + BEST_INDENT;
    const traits = traitsOf(s);
    if (s.includes("\n") && traits.blockAllowed && !place.simpleKey) this.literal(s, own);
    else this.doubleQuoted(s, own, !place.simpleKey);
  }

  private doubleQuoted(s: string, indent: number, allowBreaks: boolean): void {
    this.indicator('"', true, false, false);
    const points = [...s];
    const lastByte = Buffer.byteLength(s, "utf8") - 1;
    let byte = 0;
    let afterSpace = false;
    points.forEach((ch, i) => {
      const c = ch.codePointAt(0) ?? 0;
      if (!isPrintable(c) || isBreak(c) || c === 0x22 || c === 0x5c) {
        this.put(escapeOf(c));
        afterSpace = false;
      } else if (c === 0x20) {
        if (allowBreaks && !afterSpace && this.column > BEST_WIDTH && byte > 0 && byte < lastByte) {
          // Folded: the space becomes the line break; a following space would be lost, so it is escaped.
          this.indent(indent);
          if (points[i + 1] === " ") this.put("\\");
        } else this.put(ch);
        afterSpace = true;
      } else {
        this.put(ch);
        afterSpace = false;
      }
      byte += Buffer.byteLength(ch, "utf8");
    });
    this.indicator('"', false, false, false);
    this.whitespace = false;
    this.indention = false;
  }

  private literal(s: string, indent: number): void {
    this.indicator("|", true, false, false);
    const points = [...s].map((ch) => ch.codePointAt(0) ?? 0);
    if (points[0] === 0x20 || isBreak(points[0] ?? -1)) this.indicator(String(BEST_INDENT), false, false, false);
    this.openEnded = false;
    const last = points.length - 1;
    if (!isBreak(points[last] ?? -1)) this.indicator("-", false, false, false);
    else if (last === 0 || isBreak(points[last - 1] ?? -1)) {
      this.indicator("+", false, false, false);
      this.openEnded = true;
    }
    this.newline();
    this.indention = true;
    this.whitespace = true;
    let lineStart = true;
    for (const ch of s) {
      const c = ch.codePointAt(0) ?? 0;
      if (isBreak(c)) {
        if (c === 0x0a) this.newline();
        else {
          this.out += ch;
          this.column = 0;
        }
        this.indention = true;
        lineStart = true;
      } else {
        if (lineStart) this.indent(indent);
        this.put(ch);
        this.indention = false;
        lineStart = false;
      }
    }
  }
}

/** A number, bool or null as a plain scalar: big.Float's `Text('f', -1)` for numbers. */
function plainText(value: number | boolean | null): string {
  if (value === null) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return plainDecimal(value);
}

/** `yamlencode(value)`. */
export function ctyYamlEncode(value: Value): string {
  return new YamlWriter().document(value);
}
