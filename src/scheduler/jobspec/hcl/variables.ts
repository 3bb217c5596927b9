/**
 * Input variables and locals of a job file, as jobspec2 reads them (its
 * variable code comes from Packer): `variable "x" { type, default,
 * description, validation {…} }` and `variables { x = … }` declarations;
 * values from defaults, `NOMAD_VAR_` environment entries, variable files
 * (the API's `Variables` text), `-var` arguments and typed values, later
 * sources winning; type conversion, validation rules, the "Unset variable"
 * check; then `locals` evaluated in dependency order.
 */
import type { Attribute, Block, Expr } from "../../../core/hcl/ast.js";
import {
  ConversionError,
  convertValue,
  type Diagnostic,
  Evaluator,
  type EvalContext,
  HclDiagnosticsError,
  type HclType,
  isObject,
  parseConfig,
  parseExpression,
  type Range,
  type SourceFile,
  isTypeSpecError,
  typeFromExpr,
  type Value,
} from "../../../core/hcl/index.js";
import type { DecodeContext } from "./body.js";
import { checkSchema, defRange } from "./body.js";

interface Validation {
  readonly condition: Attribute;
  readonly errorMessage: string;
  readonly declRange: Range;
}

type From = "default" | "env" | "varfile" | "cmd";

interface Declaration {
  readonly name: string;
  type: HclType | undefined;
  readonly validations: Validation[];
  value?: Value;
  from?: From;
  /** The range of the expression that gave the value, when there is one (Go's `Expr.Range()`). */
  valueRange?: Range;
  /** A value was given but could not be read (already reported): neither unset nor validated. */
  failed?: boolean;
}

const VARIABLE_NAME = /^[\p{L}_][\p{L}\p{N}_-]*$/u;
const BAD_IDENTIFIER = "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.";
/** Go's zero `hcl.Range`, printed `:0,0-0`: the range of a value made from a -var or environment string. */
const ZERO_RANGE: Range = { filename: "", start: { line: 0, column: 0, offset: 0 }, end: { line: 0, column: 0, offset: 0 } };

export interface VariableInputs {
  /** Variable-file texts, each with its file name, in precedence order. */
  readonly varFiles: readonly { readonly filename: string; readonly text: string }[];
  /** Explicit values, already typed (fixtures' `vars`), highest precedence. */
  readonly values: Readonly<Record<string, Value>>;
  /** `-var name=value` arguments, as the CLI reads them (above variable files). */
  readonly argVars?: readonly string[];
  /** The environment: `NOMAD_VAR_<name>` entries set variables (below variable files). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Undeclared names in variable files and `-var` are errors rather than warnings. */
  readonly strict?: boolean;
}

/** cty's type of a value, which a variable without `type` takes from its default. */
function typeOfValue(v: Value): HclType {
  if (typeof v === "string") return { k: "string" };
  if (typeof v === "number") return { k: "number" };
  if (typeof v === "boolean") return { k: "bool" };
  if (Array.isArray(v)) return { k: "tuple", elems: v.map(typeOfValue) };
  if (isObject(v)) return { k: "object", attrs: Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeOfValue(x)])) };
  return { k: "any" };
}

/** Go's `unicode.IsLetter(first) && !unicode.IsUpper(first)` and the closing punctuation. */
function looksLikeSentences(s: string): boolean {
  const runes = [...s];
  const first = runes[0];
  const last = runes[runes.length - 1];
  if (first === undefined || last === undefined) return false;
  if (/\p{L}/u.test(first) && !/\p{Lu}/u.test(first)) return false;
  return last === "." || last === "?" || last === "!";
}

/** Root references of an expression (HCL's `Variables()`), leaving out names a `for` binds. */
function references(expr: Expr, bound: ReadonlySet<string> = new Set()): (Expr & { k: "traversal" })[] {
  const out: (Expr & { k: "traversal" })[] = [];
  const walk = (e: Expr, scope: ReadonlySet<string>): void => {
    switch (e.k) {
      case "traversal":
        if (!scope.has(e.root)) out.push(e);
        return;
      case "template":
        for (const part of e.parts) {
          if (typeof part === "string") continue;
          if (part.k === "interp") walk(part.expr, scope);
          else if (part.k === "if") walk(part.condition, scope);
          else walk(part.collection, scope);
        }
        return;
      case "relative":
        walk(e.source, scope);
        return;
      case "index":
        walk(e.collection, scope);
        walk(e.key, scope);
        return;
      case "splat":
        walk(e.source, scope);
        walk(e.each, scope);
        return;
      case "call":
        for (const a of e.args) walk(a, scope);
        return;
      case "tuple":
        for (const item of e.items) walk(item, scope);
        return;
      case "object":
        for (const item of e.items) {
          walk(item.key, scope);
          walk(item.value, scope);
        }
        return;
      case "for": {
        walk(e.collection, scope);
        const inner = new Set([...scope, e.valueVar, ...(e.keyVar ? [e.keyVar] : [])]);
        if (e.keyExpr) walk(e.keyExpr, inner);
        walk(e.valueExpr, inner);
        if (e.condition) walk(e.condition, inner);
        return;
      }
      case "conditional":
        walk(e.condition, scope);
        walk(e.whenTrue, scope);
        walk(e.whenFalse, scope);
        return;
      case "binary": {
        // Down the left side in a loop: an operator chain (`1+1+…+1`) is as deep as it is long.
        const rights: Expr[] = [];
        let left: Expr = e;
        for (; left.k === "binary"; left = left.left) rights.push(left.right);
        walk(left, scope);
        for (let i = rights.length - 1; i >= 0; i--) walk(rights[i] as Expr, scope);
        return;
      }
      case "unary":
        walk(e.operand, scope);
        return;
      case "paren":
        walk(e.inner, scope);
        return;
      default:
        return;
    }
  };
  walk(expr, bound);
  return out;
}

export class VariableSyntaxError extends Error {}

/** Reads declarations and values; returns the `var` object for evaluation. */
export function collectVariables(
  ctx: DecodeContext,
  blocks: readonly Block[],
  file: SourceFile,
  evalBase: Omit<EvalContext, "variables" | "file">,
  inputs: VariableInputs,
): Record<string, Value> {
  const declared = new Map<string, Declaration>();
  const staticEval = new Evaluator({ file, variables: {}, functions: {}, staticOnly: true });
  const range = (span: { start: number; end: number }, f: SourceFile = file): Range => f.range(span.start, span.end);
  const push = (d: Diagnostic): void => {
    ctx.report(d);
  };

  for (const block of blocks) {
    if (block.type === "variables") {
      checkSchema(
        ctx,
        { attributes: [], blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })), missingItem: block.openBrace },
        { attributes: [], blocks: new Map() },
      );
      for (const attr of block.body.attributes) {
        if (declared.has(attr.name)) {
          ctx.error("Duplicate variable", `Duplicate ${attr.name} variable definition found.`, attr.nameSpan);
          continue;
        }
        const value = ctx.evaluate(staticEval, attr);
        if (value === undefined) continue;
        declared.set(attr.name, { name: attr.name, type: typeOfValue(value), validations: [], value, from: "default", valueRange: range(attr.expr) });
      }
      continue;
    }
    if (block.type === "variable") declareBlock(block);
  }

  function declareBlock(block: Block): void {
    const name = block.labels[0] ?? "";
    if (declared.has(name)) {
      push({ severity: "error", summary: "Duplicate variable", detail: `Duplicate ${name} variable definition found.` });
      return;
    }
    const view = {
      attributes: block.body.attributes.map((attr) => ({ attr, ev: staticEval })),
      blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })),
      missingItem: block.openBrace,
    };
    const byType = checkSchema(ctx, view, { attributes: ["description", "default", "type"], blocks: new Map([["validation", { labels: 0, labelName: "" }]]) });
    if (!VARIABLE_NAME.test(name)) ctx.error("Invalid variable name", BAD_IDENTIFIER, block.labelSpans[0]);
    const decl: Declaration = { name, type: undefined, validations: [] };
    const typeAttr = block.body.attributes.find((a) => a.name === "type");
    if (typeAttr) {
      // jobspec2 reads it with typeexpr.Type: an exact type, so no `any` and no `optional(…)`.
      const t = typeFromExpr(typeAttr.expr, true);
      if (isTypeSpecError(t)) {
        ctx.error("Invalid type specification", t.detail, t.span);
        return;
      }
      decl.type = t;
    }
    const defaultAttr = block.body.attributes.find((a) => a.name === "default");
    if (defaultAttr) {
      const value = ctx.evaluate(staticEval, defaultAttr);
      if (value === undefined) return;
      decl.from = "default";
      decl.valueRange = range(defaultAttr.expr);
      if (decl.type) {
        try {
          decl.value = convertValue(value, decl.type);
        } catch (e) {
          if (!(e instanceof ConversionError)) throw e;
          ctx.error("Invalid default value for variable", `This default value is not compatible with the variable's type constraint: ${e.message}.`, defaultAttr.expr);
          decl.failed = true; // Go keeps an unknown value: neither unset nor validated
        }
      } else {
        decl.value = value;
        decl.type = typeOfValue(value);
      }
    }
    for (const v of byType.get("validation") ?? []) {
      const validation = readValidation(name, v.block);
      if (validation) decl.validations.push(validation);
    }
    declared.set(name, decl);
  }

  function readValidation(varName: string, block: Block): Validation | undefined {
    const vView = {
      attributes: block.body.attributes.map((attr) => ({ attr, ev: staticEval })),
      blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })),
      missingItem: block.openBrace,
    };
    checkSchema(ctx, vView, { attributes: ["condition", "error_message"], required: ["condition", "error_message"], blocks: new Map() });
    const condition = block.body.attributes.find((a) => a.name === "condition");
    const messageAttr = block.body.attributes.find((a) => a.name === "error_message");
    if (condition) {
      // The condition may refer to this variable only, so a declaration adds no dependencies.
      let good = 0;
      for (const ref of references(condition.expr)) {
        const [step] = ref.steps;
        if (ref.root === "var" && step?.k === "attr" && step.name === varName) {
          good++;
          continue;
        }
        ctx.error("Invalid reference in variable validation", `The condition for variable "${varName}" can only refer to the variable itself, using var.${varName}.`, ref);
      }
      if (good < 1) {
        ctx.error(
          "Invalid variable validation condition",
          `The condition for variable "${varName}" must refer to var.${varName} in order to test incoming values.`,
          condition.expr,
        );
      }
    }
    let message: string | undefined;
    if (messageAttr) {
      const value = ctx.evaluate(staticEval, messageAttr);
      if (value !== undefined) {
        if (typeof value !== "string") ctx.error("Unsuitable value type", "Unsuitable value: string required", messageAttr.expr);
        else if (value === "") ctx.error("Invalid validation error message", "An empty string is not a valid nor useful error message.", messageAttr.expr);
        else if (!looksLikeSentences(value)) {
          ctx.error(
            "Invalid validation error message",
            "Validation error message must be at least one full sentence starting with an uppercase letter ( if the alphabet permits it ) and ending with a period or question mark.",
            messageAttr.expr,
          );
        } else message = value;
      }
    }
    if (!condition || message === undefined) return undefined;
    return { condition, errorMessage: message, declRange: range(defRange(block)) };
  }

  const assign = (decl: Declaration, value: Value, from: From, valueRange: Range | undefined, mismatch: (error: string) => Diagnostic): void => {
    decl.from = from;
    if (valueRange) decl.valueRange = valueRange;
    else delete decl.valueRange;
    try {
      decl.value = decl.type ? convertValue(value, decl.type) : value;
      decl.failed = false;
    } catch (e) {
      if (!(e instanceof ConversionError)) throw e;
      push(mismatch(e.message));
      decl.failed = true;
    }
  };

  /**
   * A raw text from the environment or a `-var` argument: a string for
   * string, number and untyped variables, else parsed as an HCL expression
   * (literals only), as Nomad's expressionFromVariableDefinition does.
   */
  const assignRaw = (decl: Declaration, raw: string, from: "env" | "cmd"): void => {
    const t = decl.type;
    const mismatch =
      (expr: Range) =>
      (error: string): Diagnostic =>
        from === "env"
          ? {
              severity: "error",
              summary: "Invalid value for variable",
              detail: `The value for ${decl.name} is not compatible with the variable's type constraint: ${error}.`,
              subject: expr,
            }
          : {
              severity: "error",
              summary: "Invalid argument value for -var variable",
              detail: `The received arg value for ${decl.name} is not compatible with the variable's type constraint: ${error}.`,
              subject: expr,
            };
    if (!t || t.k === "string" || t.k === "number") {
      assign(decl, raw, from, ZERO_RANGE, mismatch(ZERO_RANGE));
      return;
    }
    try {
      const { expr, file: valueFile } = parseExpression(raw, `<value for var.${decl.name} from ${from === "env" ? "env" : "arguments"}>`);
      const exprRange = valueFile.range(expr.start, expr.end);
      assign(decl, new Evaluator({ file: valueFile, variables: {}, functions: {}, staticOnly: true }).evaluate(expr), from, exprRange, mismatch(exprRange));
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      ctx.report(...e.diagnostics);
      decl.failed = true;
    }
  };

  for (const [key, raw] of Object.entries(inputs.env ?? {})) {
    if (!key.startsWith("NOMAD_VAR_") || raw === undefined) continue;
    const decl = declared.get(key.slice("NOMAD_VAR_".length));
    if (decl) assignRaw(decl, raw, "env"); // an undeclared one is skipped silently
  }

  const undefinedSeverity = inputs.strict ? "error" : "warning";
  for (const varFile of inputs.varFiles) {
    let parsed: ReturnType<typeof parseConfig>;
    try {
      parsed = parseConfig(varFile.text, varFile.filename);
    } catch (e) {
      if (e instanceof HclDiagnosticsError) throw new VariableSyntaxError(`unable to parse var content: ${e.message}`);
      throw e;
    }
    const declarations = parsed.body.blocks.filter((b) => b.type === "variable" && b.labels.length === 1);
    for (const b of declarations) {
      const name = b.labels[0] ?? "";
      push({
        severity: "error",
        summary: "Variable declaration in a .var file",
        detail: `A .var file is used to assign values to variables that have already been declared in job files, not to declare new variables. To declare variable ${JSON.stringify(name)}, place this block in one of your job files\n\nTo set a value for this variable in ${varFile.filename}, use the definition syntax instead:\n    ${name} = <value>`,
        subject: range(b.typeSpan, parsed.file),
      });
    }
    if (declarations.length) return {};
    const [block] = parsed.body.blocks;
    if (block)
      push({ severity: "error", summary: `Unexpected ${JSON.stringify(block.type)} block`, detail: "Blocks are not allowed here.", subject: range(block.typeSpan, parsed.file) });
    const fileEval = new Evaluator({ file: parsed.file, variables: {}, functions: {}, staticOnly: true });
    for (const attr of parsed.body.attributes) {
      const decl = declared.get(attr.name);
      if (!decl) {
        push({
          severity: undefinedSeverity,
          summary: "Undefined variable",
          detail: `A ${JSON.stringify(attr.name)} variable was set but was not found in known variables. To declare variable ${JSON.stringify(attr.name)}, place this block in your job files`,
        });
        continue;
      }
      let value: Value;
      try {
        value = fileEval.evaluate(attr.expr);
      } catch (e) {
        if (!(e instanceof HclDiagnosticsError)) throw e;
        ctx.report(...e.diagnostics);
        decl.failed = true; // Go keeps an unknown value: no "unset" on top
        continue;
      }
      const valueRange = range(attr.expr, parsed.file);
      assign(decl, value, "varfile", valueRange, (error) => ({
        severity: "error",
        summary: "Invalid value for variable",
        detail: `The value for ${decl.name} is not compatible with the variable's type constraint: ${error}.`,
        subject: valueRange,
      }));
    }
  }

  for (const arg of inputs.argVars ?? []) {
    const eq = arg.indexOf("=");
    if (eq <= 0) {
      ctx.error(
        "Invalid -var option",
        `The given -var option ${JSON.stringify(arg)} is not correctly specified. Must be a variable name and value separated by an equals sign, like -var="key=value".`,
      );
      continue;
    }
    const name = arg.slice(0, eq);
    const decl = declared.get(name);
    if (!decl) {
      push({
        severity: undefinedSeverity,
        summary: "Undefined -var variable",
        detail: `A ${JSON.stringify(name)} variable was passed in the command line but was not found in known variables. To declare variable ${JSON.stringify(name)}, place this block in your job file`,
      });
      continue;
    }
    assignRaw(decl, arg.slice(eq + 1), "cmd");
  }

  for (const [name, value] of Object.entries(inputs.values)) {
    const decl = declared.get(name);
    if (!decl) continue;
    assign(decl, value, "cmd", undefined, (error) => ({
      severity: "error",
      summary: "Invalid value for variable",
      detail: `The value for ${name} is not compatible with the variable's type constraint: ${error}.`,
    }));
  }

  const values: Record<string, Value> = {};
  for (const decl of declared.values()) {
    if (decl.failed) continue;
    if (decl.value === undefined) {
      ctx.error(
        `Unset variable "${decl.name}"`,
        "A used variable must be set or have a default value; see https://developer.hashicorp.com/nomad/docs/job-specification/hcl2/variables for details.",
      );
      continue;
    }
    values[decl.name] = decl.value;
  }
  for (const decl of declared.values()) {
    if (decl.value === undefined || decl.failed) continue;
    validate(ctx, decl, file, evalBase, values);
  }
  return values;
}

/** Runs a variable's validation rules against its final value. */
function validate(ctx: DecodeContext, decl: Declaration, file: SourceFile, evalBase: Omit<EvalContext, "variables" | "file">, values: Record<string, Value>): void {
  const ev = new Evaluator({ ...evalBase, file, variables: { var: { [decl.name]: values[decl.name] ?? null } } });
  for (const v of decl.validations) {
    let result: Value;
    try {
      result = ev.evaluate(v.condition.expr);
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      ctx.report(...e.diagnostics);
      continue;
    }
    if (result === null) {
      ctx.error("Invalid variable validation result", "Validation condition expression must return either true or false, not null.", v.condition.expr);
      continue;
    }
    let ok: Value;
    try {
      ok = convertValue(result, { k: "bool" });
    } catch (e) {
      if (!(e instanceof ConversionError)) throw e;
      ctx.error("Invalid variable validation result", `Invalid validation condition result value: ${e.message}.`, v.condition.expr);
      continue;
    }
    if (ok) continue;
    const r = v.declRange;
    const declText =
      r.start.line === r.end.line
        ? `${r.filename}:${r.start.line},${r.start.column}-${r.end.column}`
        : `${r.filename}:${r.start.line},${r.start.column}-${r.end.line},${r.end.column}`;
    ctx.report({
      severity: "error",
      summary: `Invalid value for ${decl.from ?? "default"} variable`,
      detail: `${v.errorMessage}\n\nThis was checked by the validation rule at ${declText}.`,
      subject: decl.valueRange ?? v.declRange,
    });
  }
}

/** `locals { … }` blocks, evaluated in whatever order their references need. */
export function evaluateLocals(ctx: DecodeContext, blocks: readonly Block[], makeEvaluator: (locals: Record<string, Value>) => Evaluator): Record<string, Value> {
  const pending: Attribute[] = [];
  const seen = new Set<string>();
  for (const block of blocks) {
    if (block.type !== "locals") continue;
    checkSchema(
      ctx,
      { attributes: [], blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: makeEvaluator({}) })), missingItem: block.openBrace },
      { attributes: [], blocks: new Map() },
    );
    for (const attr of block.body.attributes) {
      if (seen.has(attr.name)) {
        ctx.error("Duplicate value in locals", `Local variable ${JSON.stringify(attr.name)} is defined twice`, attr.nameSpan);
        continue;
      }
      seen.add(attr.name);
      pending.push(attr);
    }
  }
  const locals: Record<string, Value> = {};
  let remaining = pending;
  // Locals may refer to each other in any order: retry until no progress, as jobspec2 does.
  for (let round = 0; round < 100 && remaining.length; round++) {
    const failed: Attribute[] = [];
    for (const attr of remaining) {
      try {
        locals[attr.name] = makeEvaluator(locals).evaluate(attr.expr);
      } catch (e) {
        if (!(e instanceof HclDiagnosticsError)) throw e;
        failed.push(attr);
      }
    }
    if (failed.length === remaining.length) break;
    remaining = failed;
  }
  for (const attr of remaining) {
    try {
      makeEvaluator(locals).evaluate(attr.expr);
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      ctx.report(...e.diagnostics);
    }
  }
  return locals;
}
