/**
 * Input variables and locals of a job file, as jobspec2 reads them (its
 * variable code comes from Packer): `variable "x" { type, default,
 * description, validation {…} }` and `variables { x = … }` declarations,
 * values from defaults, variable files (the API's `Variables` text) and
 * explicit values (later sources win), type conversion, validation rules,
 * the "Unset variable" check, then `locals` evaluated in dependency order.
 */
import type { Attribute, Block } from "../../../core/hcl/ast.js";
import {
  ConversionError,
  convertValue,
  Evaluator,
  type EvalContext,
  HclDiagnosticsError,
  type HclType,
  parseConfig,
  parseExpression,
  type SourceFile,
  typeFromExpr,
  type Value,
  asBool,
  asString,
} from "../../../core/hcl/index.js";
import type { DecodeContext } from "./body.js";
import { checkSchema, defRange } from "./body.js";

interface Validation {
  readonly condition: Attribute;
  readonly errorMessage: Attribute;
  readonly block: Block;
}

interface Declaration {
  readonly name: string;
  readonly type: HclType | undefined;
  readonly validations: readonly Validation[];
  value?: Value;
  from?: "default" | "env" | "varfile" | "cmd";
  valueSpan?: { start: number; end: number; file: SourceFile };
  /** A value was given but could not be read (already reported): neither unset nor validated. */
  failed?: boolean;
}

const VARIABLE_NAME = /^[\p{L}_][\p{L}\p{N}_-]*$/u;

export interface VariableInputs {
  /** Variable-file texts, each with its file name, in precedence order. */
  readonly varFiles: readonly { readonly filename: string; readonly text: string }[];
  /** Explicit values, already typed (fixtures' `vars`), highest precedence. */
  readonly values: Readonly<Record<string, Value>>;
  /** `-var name=value` arguments, as the CLI reads them (above variable files). */
  readonly argVars?: readonly string[];
  /** The environment: `NOMAD_VAR_<name>` entries set variables (below variable files). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

function typeOfValue(v: Value): HclType {
  if (typeof v === "string") return { k: "string" };
  if (typeof v === "number") return { k: "number" };
  if (typeof v === "boolean") return { k: "bool" };
  return { k: "any" };
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
  const evalStatic = (ev: Evaluator, attr: Attribute): Value | undefined => ctx.evaluate(ev, attr);

  const declare = (name: string, span: { start: number; end: number }, decl: Declaration): void => {
    if (!VARIABLE_NAME.test(name)) {
      ctx.error("Invalid variable name", "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.", span);
      return;
    }
    if (declared.has(name)) {
      ctx.error("Duplicate variable", `Duplicate ${name} variable definition found.`, span);
      return;
    }
    declared.set(name, decl);
  };

  for (const block of blocks) {
    if (block.type === "variables") {
      checkSchema(
        ctx,
        { attributes: [], blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })), missingItem: block.openBrace },
        { attributes: [], blocks: new Map() },
      );
      for (const attr of block.body.attributes) {
        const value = evalStatic(staticEval, attr);
        if (value === undefined) continue;
        declare(attr.name, attr.nameSpan, {
          name: attr.name,
          type: typeOfValue(value),
          validations: [],
          value,
          from: "default",
          valueSpan: { start: attr.expr.start, end: attr.expr.end, file },
        });
      }
      continue;
    }
    if (block.type !== "variable") continue;
    const name = block.labels[0] ?? "";
    const view = {
      attributes: block.body.attributes.map((attr) => ({ attr, ev: staticEval })),
      blocks: block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })),
      missingItem: block.openBrace,
    };
    const byType = checkSchema(ctx, view, { attributes: ["description", "default", "type"], blocks: new Map([["validation", { labels: 0, labelName: "" }]]) });
    const typeAttr = block.body.attributes.find((a) => a.name === "type");
    let type: HclType | undefined;
    if (typeAttr) {
      const t = typeFromExpr(typeAttr.expr);
      if (typeof t === "string") ctx.error("Invalid type specification", t, typeAttr.expr);
      else type = t;
    }
    const validations: Validation[] = [];
    for (const v of byType.get("validation") ?? []) {
      const vView = {
        attributes: v.block.body.attributes.map((attr) => ({ attr, ev: staticEval })),
        blocks: v.block.body.blocks.map((b) => ({ block: b, labels: b.labels, ev: staticEval })),
        missingItem: v.block.openBrace,
      };
      checkSchema(ctx, vView, { attributes: ["condition", "error_message"], required: ["condition", "error_message"], blocks: new Map() });
      const condition = v.block.body.attributes.find((a) => a.name === "condition");
      const errorMessage = v.block.body.attributes.find((a) => a.name === "error_message");
      if (condition && errorMessage) validations.push({ condition, errorMessage, block: v.block });
    }
    const decl: Declaration = { name, type: type ?? undefined, validations };
    const defaultAttr = block.body.attributes.find((a) => a.name === "default");
    if (defaultAttr) {
      const value = evalStatic(staticEval, defaultAttr);
      if (value !== undefined) {
        try {
          decl.value = type ? convertValue(value, type) : value;
          decl.from = "default";
          decl.valueSpan = { start: defaultAttr.expr.start, end: defaultAttr.expr.end, file };
        } catch (e) {
          if (!(e instanceof ConversionError)) throw e;
          ctx.error("Invalid default value for variable", `This default value is not compatible with the variable's type constraint: ${e.message}.`, defaultAttr.expr);
          decl.failed = true; // reported already: not "unset" as well
        }
      }
    }
    declare(name, block.labelSpans[0] ?? block.typeSpan, decl);
  }

  const assign = (decl: Declaration, value: Value, from: "env" | "varfile" | "cmd", span?: { start: number; end: number; file: SourceFile }): void => {
    try {
      decl.value = decl.type ? convertValue(value, decl.type) : value;
      decl.from = from;
      if (span) decl.valueSpan = span;
      else delete decl.valueSpan;
    } catch (e) {
      if (!(e instanceof ConversionError)) throw e;
      ctx.diags.push({
        severity: "error",
        summary: "Invalid value for variable",
        detail: `The value for ${decl.name} is not compatible with the variable's type constraint: ${e.message}.`,
        ...(span ? { subject: span.file.range(span.start, span.end) } : {}),
      });
    }
  };

  /**
   * A raw text from the environment or a `-var` argument: a string for
   * string, number and untyped variables, else parsed as an HCL expression
   * (literals only), as Nomad's expressionFromVariableDefinition does.
   */
  const assignRaw = (name: string, raw: string, from: "env" | "cmd"): void => {
    const decl = declared.get(name);
    if (!decl) return; // undeclared: only a warning where Nomad is not strict
    const t = decl.type;
    if (!t || t.k === "string" || t.k === "number") {
      assign(decl, raw, from);
      return;
    }
    try {
      const { expr, file: valueFile } = parseExpression(raw, `<value for var.${name} from ${from === "env" ? "env" : "arguments"}>`);
      assign(decl, new Evaluator({ file: valueFile, variables: {}, functions: {}, staticOnly: true }).evaluate(expr), from);
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      ctx.diags.push(...e.diagnostics);
      decl.failed = true;
    }
  };

  for (const [key, raw] of Object.entries(inputs.env ?? {})) {
    if (key.startsWith("NOMAD_VAR_") && raw !== undefined) assignRaw(key.slice("NOMAD_VAR_".length), raw, "env");
  }

  for (const varFile of inputs.varFiles) {
    let parsed: ReturnType<typeof parseConfig>;
    try {
      parsed = parseConfig(varFile.text, varFile.filename);
    } catch (e) {
      if (e instanceof HclDiagnosticsError) throw new VariableSyntaxError(`unable to parse var content: ${e.message}`);
      throw e;
    }
    const fileEval = new Evaluator({ file: parsed.file, variables: {}, functions: {}, staticOnly: true });
    for (const b of parsed.body.blocks) {
      const r = parsed.file.range(b.typeSpan.start, b.typeSpan.end);
      ctx.diags.push({
        severity: "error",
        summary: b.type === "variable" ? "Variable declaration in a .var file" : `Unsupported block type`,
        detail:
          b.type === "variable"
            ? `A .var file is for setting variables. Variable ${JSON.stringify(b.labels[0] ?? "")} cannot be declared here.`
            : `Blocks of type "${b.type}" are not expected here.`,
        subject: r,
      });
    }
    for (const attr of parsed.body.attributes) {
      let value: Value;
      try {
        value = fileEval.evaluate(attr.expr);
      } catch (e) {
        if (!(e instanceof HclDiagnosticsError)) throw e;
        ctx.diags.push(...e.diagnostics);
        // Like Packer's code, the failed value still counts as given: no "unset" on top.
        const failed = declared.get(attr.name);
        if (failed) failed.failed = true;
        continue;
      }
      const decl = declared.get(attr.name);
      // An undeclared name is only a warning in Nomad's non-strict mode.
      if (decl) assign(decl, value, "varfile", { start: attr.expr.start, end: attr.expr.end, file: parsed.file });
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
    assignRaw(arg.slice(0, eq), arg.slice(eq + 1), "cmd");
  }
  for (const [name, value] of Object.entries(inputs.values)) {
    const decl = declared.get(name);
    if (decl) assign(decl, value, "cmd");
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

function validate(ctx: DecodeContext, decl: Declaration, file: SourceFile, evalBase: Omit<EvalContext, "variables" | "file">, values: Record<string, Value>): void {
  const ev = new Evaluator({ ...evalBase, file, variables: { var: { [decl.name]: values[decl.name] ?? null } } });
  for (const v of decl.validations) {
    let ok: boolean | undefined;
    let message: string | undefined;
    try {
      ok = asBool(ev.evaluate(v.condition.expr));
      message = asString(ev.evaluate(v.errorMessage.expr));
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      ctx.diags.push(...e.diagnostics);
      continue;
    }
    if (ok === undefined) {
      ctx.error("Invalid validation result", "Invalid validation condition result value: a bool is required.", v.condition.expr);
      continue;
    }
    if (message === undefined || !/[.?!]$/.test(message.trim()) || /^\p{Ll}/u.test(message)) {
      ctx.error(
        "Invalid validation error message",
        "Validation error message must be at least one full English sentence starting with an uppercase letter and ending with a period or question mark.",
        v.errorMessage.expr,
      );
      continue;
    }
    if (ok) continue;
    const span = decl.valueSpan;
    ctx.diags.push({
      severity: "error",
      summary: `Invalid value for ${decl.from ?? "default"} variable`,
      detail: `${message}\n\nThis was checked by the validation rule at ${ctx.rangeText(defRange(v.block))}.`,
      ...(span ? { subject: span.file.range(span.start, span.end) } : {}),
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
      ctx.diags.push(...e.diagnostics);
    }
  }
  return locals;
}
