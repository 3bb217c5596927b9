/**
 * A recursive-descent parser for HCL2's native syntax (the language of
 * HashiCorp's hclsyntax package): bodies of attributes and blocks, the full
 * expression grammar (operators, conditionals, `for` expressions, splats,
 * function calls with `...` expansion) and string templates with `${}`
 * interpolations, `%{if}`/`%{for}` directives, strip markers and heredocs.
 *
 * It works on characters rather than a separate token stream because HCL's
 * lexical rules change inside templates (a `"` inside `${…}` opens a nested
 * string). Syntax errors are reported with HCL's summaries and positions;
 * parsing stops at the first one, as the rest of a broken file tells little.
 */
import type { Body, Expr } from "./ast.js";
import { BodyParser } from "./parse/bodies.js";
import { SourceFile } from "./source.js";

/** Parses a whole configuration file into its top-level body. */
export function parseConfig(text: string, filename: string): { body: Body; file: SourceFile } {
  const file = new SourceFile(filename, text);
  const parser = new BodyParser(file);
  const body = parser.parseBody(true);
  return { body, file };
}

/** Parses a standalone expression (e.g. a type constraint or a `-var` value). */
export function parseExpression(text: string, filename: string): { expr: Expr; file: SourceFile } {
  const file = new SourceFile(filename, text);
  const parser = new BodyParser(file);
  const expr = parser.parseStandaloneExpression();
  return { expr, file };
}
