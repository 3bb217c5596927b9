/**
 * HCL2 native syntax: parser, evaluator, type constraints and the standard
 * function library, written for standin.
 *
 * Why hand-written: the npm HCL2 packages are Go's HCL compiled to WASM or
 * GopherJS behind an HCL-to-JSON converter (`@cdktf/hcl2json`, its fork
 * `@cdktn/hcl2json`, `hcl2-parser`). They return every expression as an
 * unevaluated `"${…}"` string, drop source positions and the order of
 * differently-labelled blocks, and (for `hcl2-parser`) swallow syntax
 * errors. Reading a Nomad job file needs all of what they drop: evaluation
 * of variables, locals, functions, conditionals, `for` expressions and
 * templates, `dynamic` blocks, block order, and diagnostics with
 * `file:line,col` ranges in HCL's wording. `@cdktf/hcl2json` is also part of
 * CDKTF, which HashiCorp deprecated in 2025. A small TypeScript
 * implementation of the native syntax (this folder) is easier to keep exact
 * and deterministic than a converter plus a second expression parser.
 * The HCL-JSON syntax is not implemented.
 */
export type { Attribute, Block, Body, Expr } from "./ast.js";
export { Evaluator, type EvalContext, FunctionError, type HclFunction } from "./evaluate.js";
export { FILESYSTEM_FUNCTIONS, type FunctionDeps, standardFunctions } from "./functions.js";
export { parseConfig, parseExpression } from "./parser.js";
export { type Diagnostic, diagnosticString, diagnosticsString, errorDiag, HclDiagnosticsError, HclLimitError, type Range, rangeString, SourceFile } from "./source.js";
export { ConversionError, convertValue, friendlyTypeName, type HclType, isTypeSpecError, typeFromExpr, type TypeSpecError } from "./types.js";
export { isObject, numberToString, asString, asNumber, asBool, typeName, type Value } from "./value.js";
