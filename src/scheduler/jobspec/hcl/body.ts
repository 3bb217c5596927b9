/**
 * A body as the job decoder sees it: its arguments and blocks, each paired
 * with the evaluator that must read it, after `dynamic` blocks have been
 * expanded (HCL's dynblock extension, which jobspec2 applies to the whole
 * job). Also the schema checks gohcl makes before decoding a body: unknown
 * arguments and block types (with HCL's "Did you mean" suggestions),
 * duplicated single blocks and wrong label counts.
 */
import {
  type Attribute,
  type Block,
  type Diagnostic,
  type Evaluator,
  errorDiag,
  HclDiagnosticsError,
  type SourceFile,
  type Value,
  isObject,
  asString,
} from "../../../core/hcl/index.js";
import type { Span } from "../../../core/hcl/ast.js";
import { suggestion } from "../../../core/hcl/suggest.js";

export interface BoundAttribute {
  readonly attr: Attribute;
  readonly ev: Evaluator;
}

export interface BoundBlock {
  readonly block: Block;
  readonly labels: readonly string[];
  readonly ev: Evaluator;
}

export interface BodyView {
  readonly attributes: readonly BoundAttribute[];
  readonly blocks: readonly BoundBlock[];
  /** Where a missing required argument is reported (the body's opening brace). */
  readonly missingItem: Span;
}

/**
 * The diagnostics standin collects from one job file. Nomad lists every one
 * (a file of 200,000 unknown arguments answers 18 MB); standin stops
 * decoding at the next one past this many (TooManyDiagnostics).
 */
export const MAX_DIAGNOSTICS = 100;

/** Thrown when a job file has more than MAX_DIAGNOSTICS diagnostics: decoding stops there. */
export class TooManyDiagnostics extends Error {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(`more than ${MAX_DIAGNOSTICS} diagnostics`);
    this.name = "TooManyDiagnostics";
  }
}

export class DecodeContext {
  /** Every diagnostic so far; add them with `error`, `warn` or `report` (which enforce MAX_DIAGNOSTICS). */
  readonly diags: Diagnostic[] = [];
  /**
   * Problems evaluating free-form maps (`config`, `policy`): jobspec2 reads
   * those after the rest and reports them only when the rest decoded, as
   * HCL's one-line summary (first problem, then how many others).
   */
  readonly mapDiags: Diagnostic[] = [];
  constructor(readonly file: SourceFile) {}

  error(summary: string, detail: string, span?: Span): void {
    this.report(errorDiag(summary, detail, span ? this.file.range(span.start, span.end) : undefined));
  }

  /** A warning: reported only alongside errors, as Nomad joins every diagnostic when one is an error. */
  warn(summary: string, detail: string): void {
    this.report({ severity: "warning", summary, detail });
  }

  /** Records diagnostics; past MAX_DIAGNOSTICS, stops the decoding. */
  report(...diags: readonly Diagnostic[]): void {
    for (const d of diags) {
      if (this.diags.length >= MAX_DIAGNOSTICS) throw new TooManyDiagnostics(this.diags);
      this.diags.push(d);
    }
  }

  get hasErrors(): boolean {
    return this.diags.some((d) => d.severity === "error");
  }

  rangeText(span: Span): string {
    const r = this.file.range(span.start, span.end);
    return r.start.line === r.end.line
      ? `${r.filename}:${r.start.line},${r.start.column}-${r.end.column}`
      : `${r.filename}:${r.start.line},${r.start.column}-${r.end.line},${r.end.column}`;
  }

  /** Evaluates an expression, recording its diagnostics (in `into`); undefined when it failed. */
  evaluate(ev: Evaluator, attr: Attribute, into: Diagnostic[] = this.diags): Value | undefined {
    try {
      return ev.evaluate(attr.expr);
    } catch (e) {
      if (!(e instanceof HclDiagnosticsError)) throw e;
      if (into === this.diags) this.report(...e.diagnostics);
      else into.push(...e.diagnostics);
      return undefined;
    }
  }
}

/**
 * A block's definition range: from its type to its last label, the brace left
 * out (hclsyntax's `Block.DefRange`), so `update {` is reported as `3-9`.
 */
export function defRange(block: Block): Span {
  const last = block.labelSpans[block.labelSpans.length - 1] ?? block.typeSpan;
  return { start: block.typeSpan.start, end: last.end };
}

/** The body of a block, or of the file, with `dynamic` blocks expanded in place. */
export function viewBody(ctx: DecodeContext, block: { body: Block["body"] } & Partial<Pick<Block, "openBrace">>, ev: Evaluator): BodyView {
  const attributes = block.body.attributes.map((attr) => ({ attr, ev }));
  const blocks: BoundBlock[] = [];
  for (const b of block.body.blocks) {
    if (b.type === "dynamic") blocks.push(...expandDynamic(ctx, b, ev));
    else blocks.push({ block: b, labels: b.labels, ev });
  }
  const brace = block.openBrace?.start ?? 0;
  return { attributes, blocks, missingItem: { start: brace, end: brace } };
}

/** `dynamic "type" { for_each = …  iterator = …  labels = […]  content { … } }`. */
function expandDynamic(ctx: DecodeContext, dyn: Block, ev: Evaluator): BoundBlock[] {
  if (dyn.labels.length !== 1) {
    ctx.error(
      dyn.labels.length === 0 ? "Missing block type name for dynamic" : "Extraneous label for dynamic",
      dyn.labels.length === 0 ? "All dynamic blocks must have 1 labels (type)." : "Only 1 labels (type) are expected for dynamic blocks.",
      dyn.labels.length === 0 ? dyn.openBrace : dyn.labelSpans[1],
    );
    return [];
  }
  const type = dyn.labels[0] as string;
  const known = new Set(["for_each", "iterator", "labels"]);
  for (const a of dyn.body.attributes) {
    if (!known.has(a.name)) ctx.error("Unsupported argument", `An argument named "${a.name}" is not expected here.`, a.nameSpan);
  }
  const contents = dyn.body.blocks.filter((b) => b.type === "content");
  for (const b of dyn.body.blocks) if (b.type !== "content") ctx.error("Unsupported block type", `Blocks of type "${b.type}" are not expected here.`, b.typeSpan);
  const forEach = dyn.body.attributes.find((a) => a.name === "for_each");
  if (!forEach) {
    ctx.error("Missing required argument", 'The argument "for_each" is required, but no definition was found.', { start: dyn.openBrace.start, end: dyn.openBrace.start });
    return [];
  }
  const content = contents[0];
  if (!content) {
    ctx.error("Missing content block", 'A dynamic block must have a nested block of type "content" to describe the body of each generated block.', dyn.openBrace);
    return [];
  }
  if (contents.length > 1) {
    ctx.error("Duplicate content block", "Only one content block is allowed in each dynamic block.", (contents[1] as Block).typeSpan);
  }
  const iteratorAttr = dyn.body.attributes.find((a) => a.name === "iterator");
  let iterator = type;
  if (iteratorAttr) {
    const e = iteratorAttr.expr;
    if (e.k !== "traversal" || e.steps.length > 0) {
      ctx.error("Invalid dynamic iterator name", "Dynamic iterator must be a single variable name.", e);
      return [];
    }
    iterator = e.root;
  }
  const collection = ctx.evaluate(ev, forEach);
  if (collection === undefined) return [];
  const items: [Value, Value][] = Array.isArray(collection)
    ? collection.map((v, i) => [i, v])
    : isObject(collection)
      ? Object.keys(collection)
          .sort()
          .map((k) => [k, collection[k] as Value])
      : [];
  if (!Array.isArray(collection) && !isObject(collection)) {
    ctx.error(
      "Invalid dynamic for_each value",
      `Cannot use a ${collection === null ? "null value" : typeof collection} in for_each. An iterable collection is required.`,
      forEach.expr,
    );
    return [];
  }
  const labelsAttr = dyn.body.attributes.find((a) => a.name === "labels");
  const out: BoundBlock[] = [];
  for (const [key, value] of items) {
    const inner = ev.with({ [iterator]: { key, value } });
    let labels: string[] = [];
    if (labelsAttr) {
      const raw = ctx.evaluate(inner, labelsAttr);
      if (raw === undefined) continue;
      if (!Array.isArray(raw) || raw.some((l) => asString(l) === undefined)) {
        ctx.error("Invalid dynamic block labels", "The labels argument must be a list of strings.", labelsAttr.expr);
        continue;
      }
      labels = raw.map((l) => asString(l) as string);
    }
    const synthetic: Block = { ...content, type, labels, typeSpan: dyn.typeSpan, labelSpans: labels.map(() => dyn.labelSpans[0] as Span) };
    out.push({ block: synthetic, labels, ev: inner });
  }
  return out;
}

export interface BodySchema {
  readonly attributes: readonly string[];
  readonly required?: readonly string[];
  /** Block types with how many labels they take. */
  readonly blocks: ReadonlyMap<string, { labels: number; labelName: string }>;
}

/**
 * hclsyntax's `Body.Content` checks: required arguments present, block label
 * counts, no unknown arguments or block types. Returns the blocks with the
 * right labels, grouped by type.
 */
export function checkSchema(ctx: DecodeContext, body: BodyView, schema: BodySchema): Map<string, BoundBlock[]> {
  const present = new Set(body.attributes.map((a) => a.attr.name));
  for (const name of schema.required ?? []) {
    if (!present.has(name)) ctx.error("Missing required argument", `The argument "${name}" is required, but no definition was found.`, body.missingItem);
  }
  const byType = new Map<string, BoundBlock[]>();
  for (const b of body.blocks) {
    const spec = schema.blocks.get(b.block.type);
    if (!spec) continue;
    if (b.labels.length > spec.labels) {
      const extra = b.block.labelSpans[spec.labels] ?? b.block.typeSpan;
      ctx.error(
        `Extraneous label for ${b.block.type}`,
        spec.labels === 0 ? `No labels are expected for ${b.block.type} blocks.` : `Only ${spec.labels} labels (${spec.labelName}) are expected for ${b.block.type} blocks.`,
        extra,
      );
      continue;
    }
    if (b.labels.length < spec.labels) {
      ctx.error(`Missing ${spec.labelName} for ${b.block.type}`, `All ${b.block.type} blocks must have ${spec.labels} labels (${spec.labelName}).`, b.block.openBrace);
      continue;
    }
    const list = byType.get(b.block.type) ?? [];
    list.push(b);
    byType.set(b.block.type, list);
  }
  const blockNames = [...schema.blocks.keys()];
  for (const { attr } of body.attributes) {
    if (schema.attributes.includes(attr.name)) continue;
    let detail = `An argument named "${attr.name}" is not expected here.`;
    if (schema.blocks.has(attr.name)) detail += ` Did you mean to define a block of type "${attr.name}"?`;
    else {
      const s = suggestion(attr.name, schema.attributes);
      if (s) detail += ` Did you mean "${s}"?`;
    }
    ctx.error("Unsupported argument", detail, attr.nameSpan);
  }
  for (const { block } of body.blocks) {
    if (schema.blocks.has(block.type)) continue;
    let detail = `Blocks of type "${block.type}" are not expected here.`;
    if (schema.attributes.includes(block.type)) detail += ` Did you mean to define argument "${block.type}"? If so, use the equals sign to assign it a value.`;
    else {
      const s = suggestion(block.type, blockNames);
      if (s) detail += ` Did you mean "${s}"?`;
    }
    ctx.error("Unsupported block type", detail, block.typeSpan);
  }
  return byType;
}
