/**
 * Evaluates HCL2 expressions to plain JSON-like values (null, boolean,
 * number, string, arrays for lists/tuples/sets, plain objects for maps and
 * objects), with HCL's operator, conditional, `for`, splat and template
 * semantics and its diagnostic texts.
 *
 * Two hooks let an embedding program shape the language: the function table,
 * and `unknownRoot`, which decides what a reference to an undeclared root
 * (`NOMAD_META_x`, `attr.kernel.name`) evaluates to — Nomad gives back the
 * reference's own source text so the runtime can interpolate it later.
 */
import { type Expr, type Span, type Step, startSpan, type TemplatePart } from "./ast.js";
import { suggestion } from "./suggest.js";
import { ConversionError, convertValue, isTypeSpecError, typeFromExpr } from "./types.js";
import { type Diagnostic, errorDiag, HclDiagnosticsError, HclLimitError, type SourceFile } from "./source.js";
import { valueSize } from "./value-size.js";
import { asBool, asNumber, asString, entries, isObject, typeName, type Value } from "./value.js";

/** An error a function raises; the evaluator turns it into HCL's diagnostic. */
export class FunctionError extends Error {
  /** Index of the offending argument, or undefined when the call as a whole failed. */
  readonly argIndex: number | undefined;
  readonly paramName: string | undefined;
  constructor(message: string, argIndex?: number, paramName?: string) {
    super(message);
    this.argIndex = argIndex;
    this.paramName = paramName;
  }
}

/**
 * A function of the HCL library. `cost`, when given, is the work a call does
 * beyond reading and returning its values, in evaluation-budget units (e.g.
 * a regular expression's scan of its text).
 */
export type HclFunction = ((args: Value[]) => Value) & { readonly cost?: (args: Value[]) => number };

/**
 * Characters and elements of values a function reads or returns that cost
 * as much as one expression evaluation: calls are charged for their
 * arguments and results, so a loop over a costly call runs out of budget
 * as a loop over a cheap one does.
 */
const SIZE_PER_EVALUATION = 16;

export interface EvalContext {
  readonly file: SourceFile;
  readonly variables: Readonly<Record<string, Value>>;
  readonly functions: Readonly<Record<string, HclFunction>>;
  /**
   * What a reference to an undeclared root evaluates to: given the source text
   * of the reference (or of the whole `${…}` around it), a value; when absent
   * such a reference is HCL's "Unknown variable" error.
   */
  readonly unknownRoot?: (sourceText: string) => Value;
  /** Names of functions that exist but are refused (e.g. filesystem access), with the reason. */
  readonly disabledFunctions?: Readonly<Record<string, string>>;
  /** Literal-only context (HCL's nil EvalContext): no variables, no function calls. */
  readonly staticOnly?: boolean;
  /**
   * Shared count of expression evaluations still allowed (standin's bound, so
   * nested `for` expressions cannot run away); unbounded when absent.
   */
  readonly budget?: { remaining: number };
  /**
   * Shared count of string characters and collection elements the
   * evaluation may still build (value-size.ts counts them): a template,
   * function call, tuple, object or `for` expression spends the size of what
   * it makes. Unbounded when absent.
   */
  readonly built?: { remaining: number };
}

export class Evaluator {
  constructor(private readonly ctx: EvalContext) {}

  private diag(summary: string, detail: string, span: Span): HclDiagnosticsError {
    const d: Diagnostic = errorDiag(summary, detail, this.ctx.file.range(span.start, span.end));
    return new HclDiagnosticsError([d]);
  }

  private text(span: Span): string {
    return this.ctx.file.text.slice(span.start, span.end);
  }

  /** A child evaluator with extra variables in scope (for-expression and iterator names). */
  with(variables: Record<string, Value>): Evaluator {
    return new Evaluator({ ...this.ctx, variables: { ...this.ctx.variables, ...variables } });
  }

  evaluate(expr: Expr, splatItem?: Value): Value {
    this.work(1, expr);
    switch (expr.k) {
      case "call":
      case "tuple":
      case "object":
      case "for":
      case "splat":
        return this.spend(this.build(expr, splatItem), expr);
      default:
        return this.build(expr, splatItem);
    }
  }

  /** Takes work beyond one evaluation (a call's reading of large values, a long operator chain) from the evaluation budget. */
  private work(units: number, span: Span): void {
    const budget = this.ctx.budget;
    if (!budget) return;
    budget.remaining -= units;
    if (budget.remaining < 0) {
      throw this.limit(
        "Evaluation too large",
        "This configuration needs more expression evaluations than standin allows (nested 'for' expressions over large collections?).",
        span,
      );
    }
  }

  /** A limit of standin's own: ends the whole evaluation (try() and can() do not catch it). */
  private limit(summary: string, detail: string, span: Span): HclLimitError {
    return new HclLimitError(errorDiag(summary, detail, this.ctx.file.range(span.start, span.end)));
  }

  private tooLarge(span: Span): HclLimitError {
    return this.limit(
      "Value too large",
      "This configuration builds more string characters and collection elements than standin allows (a string doubled again and again, or repeated over a large collection?).",
      span,
    );
  }

  /** Takes the size of a value just built from the value budget. */
  private spend<T extends Value>(value: T, span: Span): T {
    const built = this.ctx.built;
    if (built) {
      built.remaining -= valueSize(value);
      if (built.remaining < 0) throw this.tooLarge(span);
    }
    return value;
  }

  /** Refuses a string being built that has already outgrown what the budget has left. */
  private checkGrowth(length: number, span: Span): void {
    const built = this.ctx.built;
    if (built && length > built.remaining) throw this.tooLarge(span);
  }

  private build(expr: Expr, splatItem: Value | undefined): Value {
    switch (expr.k) {
      case "literal":
        return expr.value;
      case "template":
        return this.template(expr.parts, splatItem, expr);
      case "paren":
        return this.evaluate(expr.inner, splatItem);
      case "traversal": {
        if (this.ctx.staticOnly) throw this.diag("Variables not allowed", "Variables may not be used here.", expr);
        if (!Object.hasOwn(this.ctx.variables, expr.root)) {
          if (this.ctx.unknownRoot) return this.ctx.unknownRoot(`\${${this.text(expr)}}`);
          throw this.diag("Unknown variable", `There is no variable named "${expr.root}".`, { start: expr.start, end: expr.start + expr.root.length });
        }
        return this.steps(this.ctx.variables[expr.root] as Value, expr.steps);
      }
      case "relative":
        return this.steps(this.evaluate(expr.source, splatItem), expr.steps);
      case "splatItem":
        return splatItem ?? null;
      case "index":
        return this.index(this.evaluate(expr.collection, splatItem), this.evaluate(expr.key, splatItem), expr.key);
      case "splat": {
        const source = this.evaluate(expr.source, splatItem);
        const items = source === null ? [] : Array.isArray(source) ? source : [source];
        // A value that is not a list is taken as a one-element list (HCL's splat rule).
        return items.map((item) => this.evaluate(expr.each, item));
      }
      case "call":
        return this.call(expr, splatItem);
      case "tuple":
        return expr.items.map((item) => this.evaluate(item, splatItem));
      case "object": {
        const out: Record<string, Value> = {};
        for (const item of expr.items) {
          const key = asString(this.evaluate(item.key, splatItem));
          if (key === undefined) throw this.diag("Incorrect key type", "Can't use this value as a key: string required.", item.key);
          out[key] = this.evaluate(item.value, splatItem);
        }
        return out;
      }
      case "for":
        return this.forExpr(expr, splatItem);
      case "conditional": {
        const condition = this.evaluate(expr.condition, splatItem);
        const bool = asBool(condition);
        if (bool === undefined) {
          throw this.diag("Incorrect condition type", "The condition expression must be of type bool.", expr.condition);
        }
        return this.evaluate(bool ? expr.whenTrue : expr.whenFalse, splatItem);
      }
      case "unary": {
        const operand = this.evaluate(expr.operand, splatItem);
        if (expr.op === "!") {
          const b = asBool(operand);
          if (b === undefined) throw this.diag("Invalid operand", "Unsuitable value for unary operand: bool required.", expr.operand);
          return !b;
        }
        const n = asNumber(operand);
        if (n === undefined) throw this.diag("Invalid operand", "Unsuitable value for unary operand: number required.", expr.operand);
        return -n;
      }
      case "binary":
        return this.binary(expr, splatItem);
    }
  }

  private steps(start: Value, steps: readonly Step[]): Value {
    let value = start;
    for (const step of steps) {
      if (step.k === "attr") {
        if (value === null) throw this.diag("Attempt to get attribute from null value", "This value is null, so it does not have any attributes.", step);
        if (!isObject(value)) {
          if (Array.isArray(value)) {
            throw this.diag("Unsupported attribute", `This value does not have any attributes.`, step);
          }
          throw this.diag("Unsupported attribute", `Can't access attributes on a primitive-typed value (${typeName(value)}).`, step);
        }
        if (!Object.hasOwn(value, step.name)) {
          throw this.diag("Unsupported attribute", `This object does not have an attribute named "${step.name}".`, step);
        }
        value = value[step.name] as Value;
      } else {
        value = this.index(value, step.key, step);
      }
    }
    return value;
  }

  private index(collection: Value, key: Value, span: Span): Value {
    if (collection === null) throw this.diag("Attempt to index null value", "This value is null, so it does not have any indices.", span);
    if (Array.isArray(collection)) {
      const n = asNumber(key);
      if (n === undefined || !Number.isInteger(n))
        throw this.diag("Invalid index", "The given key does not identify an element in this collection value: a number is required.", span);
      if (n < 0 || n >= collection.length) throw this.diag("Invalid index", "The given key does not identify an element in this collection value.", span);
      return collection[n] as Value;
    }
    if (isObject(collection)) {
      const k = asString(key);
      if (k === undefined) throw this.diag("Invalid index", "The given key does not identify an element in this collection value: string required.", span);
      if (!Object.hasOwn(collection, k)) throw this.diag("Invalid index", "The given key does not identify an element in this collection value.", span);
      return collection[k] as Value;
    }
    throw this.diag("Invalid index", "This value does not have any indices.", span);
  }

  private call(expr: Expr & { k: "call" }, splatItem: Value | undefined): Value {
    if (this.ctx.staticOnly) throw this.diag("Function calls not allowed", "Functions may not be called here.", expr);
    // try() and can() evaluate their arguments themselves, catching errors.
    if (expr.name === "try" || expr.name === "can") {
      if (expr.name === "can" && expr.args.length !== 1) throw this.argCount(expr, 1);
      if (expr.name === "try" && expr.args.length === 0) {
        throw this.diag("Not enough function arguments", 'Function "try" expects at least 1 argument(s). Missing value for "expressions".', expr);
      }
      for (const arg of expr.args) {
        try {
          const value = this.evaluate(arg, splatItem);
          if (expr.name === "can") return true;
          return value;
        } catch (e) {
          if (!(e instanceof HclDiagnosticsError)) throw e;
          if (expr.name === "can") return false;
        }
      }
      throw this.diag("Error in function call", 'Call to function "try" failed: no expression succeeded.', startSpan(expr));
    }
    if (expr.name === "convert") return this.convertCall(expr, splatItem);
    const disabled = this.ctx.disabledFunctions?.[expr.name];
    const fn = this.ctx.functions[expr.name];
    if (!fn && disabled === undefined) {
      const near = suggestion(expr.name, [...Object.keys(this.ctx.functions), ...Object.keys(this.ctx.disabledFunctions ?? {}), "can", "try", "convert"]);
      throw this.diag("Call to unknown function", `There is no function named "${expr.name}".${near ? ` Did you mean "${near}"?` : ""}`, expr.nameSpan);
    }
    let args = expr.args.map((a) => this.evaluate(a, splatItem));
    if (expr.expandFinal) {
      const last = args[args.length - 1];
      if (!Array.isArray(last)) {
        throw this.diag(
          "Invalid expanding argument value",
          "The expanding argument (indicated by ...) must be of a tuple, list, or set type.",
          expr.args[expr.args.length - 1] ?? expr,
        );
      }
      args = [...args.slice(0, -1), ...last];
    }
    // hcl points a failed call at its name and opening parenthesis (FunctionCallExpr.StartRange).
    if (disabled !== undefined) throw this.diag("Error in function call", `Call to function "${expr.name}" failed: ${disabled}.`, startSpan(expr));
    const f = fn as HclFunction;
    this.work(Math.floor(args.reduce<number>((sum, a) => sum + valueSize(a), 0) / SIZE_PER_EVALUATION) + (f.cost?.(args) ?? 0), expr);
    try {
      const result = f(args);
      this.work(Math.floor(valueSize(result) / SIZE_PER_EVALUATION), expr);
      return result;
    } catch (e) {
      if (!(e instanceof FunctionError)) throw e;
      if (e.argIndex !== undefined) {
        const argExpr = expr.args[Math.min(e.argIndex, expr.args.length - 1)] ?? expr;
        const param = e.paramName ? `"${e.paramName}" parameter` : "parameter";
        throw this.diag("Invalid function argument", `Invalid value for ${param}: ${e.message}.`, startSpan(argExpr));
      }
      if (e.message.startsWith("arity:")) {
        // hcl points "too many" at the first argument past the parameters, "not enough" at the closing parenthesis.
        const allowed = /expects only (\d+) argument/.exec(e.message)?.[1];
        if (allowed !== undefined) throw this.diag("Too many function arguments", e.message.slice(6), startSpan(expr.args[Number(allowed)] ?? expr));
        throw this.diag("Not enough function arguments", e.message.slice(6), { start: expr.end - 1, end: expr.end });
      }
      throw this.diag("Error in function call", `Call to function "${expr.name}" failed: ${e.message}.`, startSpan(expr));
    }
  }

  /** `convert(value, type)`: the second argument is a type constraint, not a value. */
  private convertCall(expr: Expr & { k: "call" }, splatItem: Value | undefined): Value {
    const [valueExpr, typeExpr] = expr.args;
    if (!valueExpr || !typeExpr || expr.args.length !== 2) throw this.argCount(expr, 2);
    const type = typeFromExpr(typeExpr);
    if (isTypeSpecError(type)) throw this.diag("Invalid type specification", type.detail, type.span);
    const value = this.evaluate(valueExpr, splatItem);
    try {
      return convertValue(value, type);
    } catch (e) {
      if (!(e instanceof ConversionError)) throw e;
      throw this.diag("Invalid function argument", `Invalid value for "value" parameter: ${e.message}.`, valueExpr);
    }
  }

  private argCount(expr: Expr & { k: "call" }, n: number): HclDiagnosticsError {
    return this.diag(expr.args.length > n ? "Too many function arguments" : "Not enough function arguments", `Function "${expr.name}" expects only ${n} argument(s).`, expr);
  }

  private forExpr(expr: Expr & { k: "for" }, splatItem: Value | undefined): Value {
    const collection = this.evaluate(expr.collection, splatItem);
    const items = entries(collection);
    if (items === undefined) {
      throw this.diag("Iteration over non-iterable value", `A value of type ${typeName(collection)} cannot be used as the collection in a 'for' expression.`, expr.collection);
    }
    const tupleOut: Value[] = [];
    const objectOut: Record<string, Value> = {};
    const grouped: Record<string, Value[]> = {};
    for (const [key, value] of items) {
      const scope: Record<string, Value> = { [expr.valueVar]: value };
      if (expr.keyVar) scope[expr.keyVar] = key;
      const inner = this.with(scope);
      if (expr.condition) {
        const cond = asBool(inner.evaluate(expr.condition, splatItem));
        if (cond === undefined) throw this.diag("Invalid 'for' condition", "The 'if' clause value is invalid: bool required.", expr.condition);
        if (!cond) continue;
      }
      const out = inner.evaluate(expr.valueExpr, splatItem);
      if (!expr.keyExpr) {
        tupleOut.push(out);
        continue;
      }
      const k = asString(inner.evaluate(expr.keyExpr, splatItem));
      if (k === undefined) throw this.diag("Invalid object key", "The key expression produced an invalid result: string required.", expr.keyExpr);
      if (expr.group) {
        (grouped[k] ??= []).push(out);
      } else {
        if (Object.hasOwn(objectOut, k)) {
          throw this.diag(
            "Duplicate object key",
            `Two different items produced the key ${JSON.stringify(k)} in this 'for' expression. If duplicates are expected, use the ellipsis (...) after the value expression to enable grouping by key.`,
            expr.keyExpr,
          );
        }
        objectOut[k] = out;
      }
    }
    if (!expr.keyExpr) return tupleOut;
    return expr.group ? grouped : objectOut;
  }

  /**
   * A chain of left-associative operators (`1+1+…+1`) is a tree as deep as
   * it is long: it is walked down its left side in a loop, not by recursion,
   * so a million terms cost a million steps (and the evaluation budget), not
   * a million stack frames.
   */
  private binary(expr: Expr & { k: "binary" }, splatItem: Value | undefined): Value {
    const spine: (Expr & { k: "binary" })[] = [];
    let leftmost: Expr = expr;
    while (leftmost.k === "binary") {
      spine.push(leftmost);
      leftmost = leftmost.left;
    }
    // The nodes below `expr` skip evaluate(), which would have counted them.
    this.work(spine.length - 1, expr);
    let value = this.evaluate(leftmost, splatItem);
    for (let i = spine.length - 1; i >= 0; i--) value = this.operation(spine[i] as Expr & { k: "binary" }, value, splatItem);
    return value;
  }

  /** One operator, its left operand already evaluated. */
  private operation(expr: Expr & { k: "binary" }, left: Value, splatItem: Value | undefined): Value {
    const { op } = expr;
    if (op === "&&" || op === "||") {
      const l = asBool(left);
      if (l === undefined) throw this.diag("Invalid operand", "Unsuitable value for left operand: bool required.", expr.left);
      const r = asBool(this.evaluate(expr.right, splatItem));
      if (r === undefined) throw this.diag("Invalid operand", "Unsuitable value for right operand: bool required.", expr.right);
      return op === "&&" ? l && r : l || r;
    }
    const right = this.evaluate(expr.right, splatItem);
    if (op === "==" || op === "!=") {
      this.work(Math.floor((valueSize(left) + valueSize(right)) / SIZE_PER_EVALUATION), expr);
      const equal = JSON.stringify(left) === JSON.stringify(right);
      return op === "==" ? equal : !equal;
    }
    const a = asNumber(left);
    if (a === undefined) throw this.diag("Invalid operand", "Unsuitable value for left operand: a number is required.", expr.left);
    const b = asNumber(right);
    if (b === undefined) throw this.diag("Invalid operand", "Unsuitable value for right operand: a number is required.", expr.right);
    switch (op) {
      case "<":
        return a < b;
      case ">":
        return a > b;
      case "<=":
        return a <= b;
      case ">=":
        return a >= b;
      case "+":
        return a + b;
      case "-":
        return a - b;
      case "*":
        return a * b;
      case "/":
        if (b === 0) throw this.diag("Operation failed", "Error during operation: can't divide by zero.", expr);
        return a / b;
      default:
        if (b === 0) throw this.diag("Operation failed", "Error during operation: can't use modulo by zero.", expr);
        return a % b;
    }
  }

  private template(parts: readonly TemplatePart[], splatItem: Value | undefined, span: Span): Value {
    // A template that is one interpolation alone yields the value unconverted (HCL's "template wrap").
    const only = parts[0];
    if (parts.length === 1 && typeof only === "object" && only.k === "interp") return this.interpolation(only, splatItem);
    let out = "";
    for (const part of parts) {
      out += this.templatePart(part, splatItem);
      this.checkGrowth(out.length, typeof part === "string" ? span : part);
    }
    return this.spend(out, span);
  }

  private interpolation(part: Exclude<TemplatePart, string> & { k: "interp" }, splatItem: Value | undefined): Value {
    const expr = part.expr;
    if (expr.k === "traversal" && !this.ctx.staticOnly && !Object.hasOwn(this.ctx.variables, expr.root) && this.ctx.unknownRoot) {
      return this.ctx.unknownRoot(this.text(part));
    }
    return this.evaluate(expr, splatItem);
  }

  private templatePart(part: TemplatePart, splatItem: Value | undefined): string {
    if (typeof part === "string") return part;
    if (part.k === "interp") {
      const value = this.interpolation(part, splatItem);
      if (value === null) {
        throw this.diag("Invalid template interpolation value", "The expression result is null. Cannot include a null value in a string template.", part.expr);
      }
      const s = asString(value);
      if (s === undefined) {
        throw this.diag("Invalid template interpolation value", "Cannot include the given value in a string template: string required.", part.expr);
      }
      return s;
    }
    if (part.k === "if") {
      const cond = asBool(this.evaluate(part.condition, splatItem));
      if (cond === undefined) throw this.diag("Invalid template if condition", "The condition value must be a boolean: bool required.", part.condition);
      return (cond ? part.whenTrue : part.whenFalse).map((p) => this.templatePart(p, splatItem)).join("");
    }
    const collection = this.evaluate(part.collection, splatItem);
    const items = entries(collection);
    if (items === undefined)
      throw this.diag("Invalid template for directive", `A value of type ${typeName(collection)} cannot be used as the collection in a 'for' directive.`, part.collection);
    let out = "";
    for (const [key, value] of items) {
      const scope: Record<string, Value> = { [part.valueVar]: value };
      if (part.keyVar) scope[part.keyVar] = key;
      const inner = this.with(scope);
      for (const p of part.body) {
        out += inner.templatePart(p, splatItem);
        this.checkGrowth(out.length, part);
      }
    }
    return out;
  }
}
