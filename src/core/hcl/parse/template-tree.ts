/**
 * Turns a template's scanned tokens into its parts: strip markers, the
 * `<<-` heredoc indentation rule, and `%{if}`/`%{for}` directives nested
 * into a tree.
 */
import type { Expr, Span, TemplatePart } from "../ast.js";

/** Where the builder reports unbalanced directives (the parser, which knows the source). */
export interface DirectiveErrors {
  directiveError(summary: string, detail: string, span: Span): never;
}

export type TemplateToken =
  | { t: "text"; text: string }
  | ({ t: "interp"; expr: Expr; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "if"; condition: Expr; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "else" | "endif" | "endfor"; stripLeft: boolean; stripRight: boolean } & Span)
  | ({ t: "for"; keyVar: string | undefined; valueVar: string; collection: Expr; stripLeft: boolean; stripRight: boolean } & Span);

/** Go's `unicode.IsSpace`, the whitespace strip markers and `<<-` act on. */
const GO_SPACE = "\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const LEADING_SPACE = new RegExp(`^[${GO_SPACE}]+`);
const TRAILING_SPACE = new RegExp(`[${GO_SPACE}]+$`);

/**
 * Applies strip markers (`~`), the flush heredoc rule (`<<-`) and nests
 * `%{if}`/`%{for}` directives into a tree, in the order of HCL's
 * `parseTemplateInner`.
 */
export function buildTemplate(tokens: TemplateToken[], parser: DirectiveErrors, flushHeredoc: boolean): TemplatePart[] {
  const texts = tokens.map((t) => (t.t === "text" ? t.text : undefined));
  // `~}` trims the leading whitespace of the next literal token and `${~`/`%{~` the trailing whitespace of the
  // previous one: in a heredoc that is one line's worth (parseTemplateParts), never the lines beyond.
  tokens.forEach((t, i) => {
    if (t.t === "text") return;
    const prev = texts[i - 1];
    const next = texts[i + 1];
    if (t.stripLeft && prev !== undefined) texts[i - 1] = prev.replace(TRAILING_SPACE, "");
    if (t.stripRight && next !== undefined) texts[i + 1] = next.replace(LEADING_SPACE, "");
  });
  if (flushHeredoc) flushHeredocLines(texts);
  let index = 0;
  const parseSeq = (terminators: readonly string[]): { parts: TemplatePart[]; end?: TemplateToken } => {
    const parts: TemplatePart[] = [];
    while (index < tokens.length) {
      const token = tokens[index] as TemplateToken;
      const i = index++;
      if (token.t === "text") {
        const text = texts[i] ?? "";
        if (text) parts.push(text);
      } else if (token.t === "interp") {
        parts.push({ k: "interp", expr: token.expr, start: token.start, end: token.end });
      } else if (terminators.includes(token.t)) {
        return { parts, end: token };
      } else if (token.t === "if") {
        const thenSeq = parseSeq(["else", "endif"]);
        let elseParts: TemplatePart[] = [];
        if (thenSeq.end?.t === "else") {
          const elseSeq = parseSeq(["endif"]);
          if (!elseSeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endif } for this %{ if }.", token);
          elseParts = elseSeq.parts;
        } else if (!thenSeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endif } for this %{ if }.", token);
        parts.push({ k: "if", condition: token.condition, whenTrue: thenSeq.parts, whenFalse: elseParts, start: token.start, end: token.end });
      } else if (token.t === "for") {
        const bodySeq = parseSeq(["endfor"]);
        if (!bodySeq.end) parser.directiveError("Unterminated template directive", "There is no matching %{ endfor } for this %{ for }.", token);
        parts.push({ k: "for", keyVar: token.keyVar, valueVar: token.valueVar, collection: token.collection, body: bodySeq.parts, start: token.start, end: token.end });
      } else {
        parser.directiveError("Unexpected template directive", `The directive %{ ${token.t} } is not expected here.`, token);
      }
    }
    return { parts };
  };
  const parts = parseSeq([]).parts;
  // HCL passes a template's value through unconverted only when the template is one interpolation and nothing
  // else (parseTemplateInner's passthru); a literal that a strip marker emptied still counts as something else.
  const [only] = parts;
  if (tokens.length > 1 && parts.length === 1 && typeof only === "object" && only.k === "interp") return [only, ""];
  return parts;
}

/**
 * The `<<-` rule as HCL's `flushHeredocTemplateParts` applies it, after the
 * strip markers: a token starts a line when it is the first one or follows a
 * literal ending in a newline; the fewest leading spaces (in characters) of
 * those line starts is cut from each of them. A whitespace-only line is not
 * counted and keeps its spaces; a line that starts with `${` or `%{` counts as
 * zero; a line whose newline a `~}` removed no longer starts the next one.
 */
function flushHeredocLines(texts: (string | undefined)[]): void {
  let fewest = Number.POSITIVE_INFINITY;
  let lineStart = true;
  const adjust: number[] = [];
  texts.forEach((text, i) => {
    if (lineStart) {
      lineStart = false;
      if (text === undefined) fewest = 0;
      else {
        const prefix = LEADING_SPACE.exec(text)?.[0] ?? "";
        if (!(prefix.length === text.length && text.endsWith("\n"))) {
          fewest = Math.min(fewest, spaceCount(prefix));
          adjust.push(i);
        }
      }
    }
    if (text?.endsWith("\n")) lineStart = true;
  });
  if (!Number.isFinite(fewest) || fewest === 0) return;
  for (const i of adjust) texts[i] = cutSpaces(texts[i] ?? "", fewest);
}

/** Characters in a run of whitespace as grapheme clusters count them (`\r\n` is one). */
function spaceCount(prefix: string): number {
  return [...prefix].length - (prefix.match(/\r\n/g)?.length ?? 0);
}

/** `text` less its first `count` whitespace characters (all in the BMP; a `\r\n` counting once). */
function cutSpaces(text: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count && at < text.length; n++) at += text.startsWith("\r\n", at) ? 2 : 1;
  return text.slice(at);
}
