/**
 * Job files in HCL's JSON syntax. jobspec2 reads a text whose first
 * character other than a space is `{` with hcl's JSON parser
 * (`parseHCLOrJSON`), where a property is a block or an argument according
 * to the schema that reads it: `"group": {"web": {…}}` is a `group "web"`
 * block because TaskGroup is a labelled block of Job. Standin's HCL
 * implementation reads the native syntax only, so this module writes such a
 * file out in native syntax, led by the same schema (the api-structs table),
 * and the native parser reads that: every value the JSON holds reaches the
 * decoder as the native expression hcl's JSON syntax gives it (strings are
 * templates, so `"${var.x}"` interpolates; a variable's `type` string is a
 * type expression).
 *
 * Known limits (docs/known-differences.md): a diagnostic about such a file
 * points into the native rendering (its lines and columns, not the JSON's),
 * malformed JSON is reported in JavaScript's words, and `dynamic` blocks are
 * not read from JSON.
 */
import { structFields } from "./api-structs.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** jobspec2's isJSON: only spaces are skipped before the `{` (not tabs or newlines). */
export function isJsonSyntax(source: string): boolean {
  for (const c of source) {
    if (c === " ") continue;
    return c === "{";
  }
  return false;
}

/** Thrown for a text that is not JSON at all; the message is the parser's. */
export class JsonSyntaxError extends Error {}

/** How a body's properties are read: which are blocks (with their labels and body kind), the rest are arguments. */
interface BodySchema {
  readonly blocks: ReadonlyMap<string, BlockSchema>;
  /** Arguments whose string is an expression of its own, not a template (a variable's `type`). */
  readonly expressions?: ReadonlySet<string>;
}
interface BlockSchema {
  readonly labels: number;
  readonly body: () => BodySchema;
}

const ATTRIBUTES_ONLY: BodySchema = { blocks: new Map() };

const VALIDATION: BlockSchema = { labels: 0, body: () => ATTRIBUTES_ONLY };
const VARIABLE: BodySchema = { blocks: new Map([["validation", VALIDATION]]), expressions: new Set(["type"]) };

/** Blocks jobspec2 reads besides the api struct tags (decode.ts's EXTRA_BLOCKS and task scaling). */
const EXTRA_BLOCKS: Readonly<Record<string, Readonly<Record<string, readonly [string, number]>>>> = {
  Job: { vault: ["Vault", 0], task: ["Task", 1] },
  TaskGroup: { vault: ["Vault", 0] },
  Task: { scaling: ["ScalingPolicy", 1] },
};

const structSchemas = new Map<string, BodySchema>();

function structSchema(name: string): BodySchema {
  const known = structSchemas.get(name);
  if (known) return known;
  const blocks = new Map<string, BlockSchema>();
  for (const f of structFields(name)) {
    if (f.kind !== "block") continue;
    const target = /^(?:list|one|labelmap):(\w+)$/.exec(f.type)?.[1];
    if (!target) {
      blocks.set(f.hcl, { labels: 0, body: () => ATTRIBUTES_ONLY }); // config, meta, env, header…
      continue;
    }
    const labelled = structFields(target).some((t) => t.kind === "label");
    blocks.set(f.hcl, { labels: labelled ? 1 : 0, body: () => structSchema(target) });
  }
  for (const [type, [target, labels]] of Object.entries(EXTRA_BLOCKS[name] ?? {})) blocks.set(type, { labels, body: () => structSchema(target) });
  const schema: BodySchema = { blocks };
  structSchemas.set(name, schema);
  return schema;
}

const FILE: BodySchema = {
  blocks: new Map<string, BlockSchema>([
    ["job", { labels: 1, body: () => structSchema("Job") }],
    ["variable", { labels: 1, body: () => VARIABLE }],
    ["variables", { labels: 0, body: () => ATTRIBUTES_ONLY }],
    ["locals", { labels: 0, body: () => ATTRIBUTES_ONLY }],
  ]),
};

/** A JSON job file written in native syntax. */
export function jsonJobToNative(source: string): string {
  const document = parseJson(source);
  if (!isObject(document)) throw new JsonSyntaxError("the root of a JSON job file must be an object");
  return body(document, FILE, "");
}

/** A variables file (the request's `Variables`) in JSON syntax: every property an argument. */
export function jsonVariablesToNative(source: string): string {
  const document = parseJson(source);
  if (!isObject(document)) throw new JsonSyntaxError("the root of a JSON variables file must be an object");
  // jobspec2 evaluates a variables file without an evaluation context, and hcl's JSON syntax
  // then reads a string literally: `"${x}"` is those four characters, not a template.
  return body(document, ATTRIBUTES_ONLY, "", true);
}

function parseJson(source: string): Json {
  try {
    return JSON.parse(source) as Json;
  } catch (e) {
    throw new JsonSyntaxError((e as Error).message);
  }
}

function isObject(v: Json): v is { [key: string]: Json } {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function body(object: { [key: string]: Json }, schema: BodySchema, indent: string, literal = false): string {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(object)) {
    if (key === "//") continue; // hcl's JSON syntax reads a "//" property as a comment
    const block = schema.blocks.get(key);
    if (block) {
      for (const { labels, content } of blockInstances(value, block.labels)) {
        const header = [key, ...labels.map(quoted)].join(" ");
        lines.push(`${indent}${header} {`, body(content, block.body(), `${indent}  `), `${indent}}`);
      }
    } else if (schema.expressions?.has(key) && typeof value === "string") {
      lines.push(`${indent}${key} = ${value}`);
    } else {
      lines.push(`${indent}${argumentName(key)} = ${expression(value, indent, literal)}`);
    }
  }
  return lines.filter((line) => line !== "").join("\n");
}

/**
 * The blocks one property makes: each label is one level of object keys,
 * and an array at any level repeats what is inside it (hcl's JSON forms
 * `"group": {"a": {…}, "b": {…}}`, `"group": [{"a": {…}}]`, `"task": {"t": [{…}]}`).
 */
function blockInstances(value: Json, labels: number): { labels: string[]; content: { [key: string]: Json } }[] {
  if (Array.isArray(value)) return value.flatMap((item) => blockInstances(item, labels));
  if (!isObject(value)) return [{ labels: [], content: {} }];
  if (labels === 0) return [{ labels: [], content: value }];
  return Object.entries(value).flatMap(([label, inner]) => blockInstances(inner, labels - 1).map((b) => ({ labels: [label, ...b.labels], content: b.content })));
}

const IDENTIFIER = /^[\p{L}_][\p{L}\p{N}_-]*$/u;

/** A property name as a native argument name; one that is not an identifier is quoted, which the native parser refuses as hcl would refuse such a name. */
function argumentName(key: string): string {
  return IDENTIFIER.test(key) ? key : quoted(key);
}

function expression(value: Json, indent: string, literal: boolean): string {
  if (value === null) return "null";
  if (typeof value === "string") return quoted(literal ? escapeTemplates(value) : value);
  if (typeof value === "number" || typeof value === "boolean") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((v) => expression(v, indent, literal)).join(", ")}]`;
  // In parentheses: jobspec2 wraps a native object literal in a list inside `config` (decode.ts
  // freeForm), and a JSON object is no object literal, so it must not look like one.
  const items = Object.entries(value).map(([k, v]) => `${indent}  ${quoted(literal ? escapeTemplates(k) : k)} = ${expression(v, `${indent}  `, literal)}`);
  return items.length ? `({\n${items.join("\n")}\n${indent}})` : "({})";
}

/** `${` and `%{` doubled, so a native template reads them as the characters they are. */
function escapeTemplates(text: string): string {
  return text.replaceAll("${", () => "$${").replaceAll("%{", () => "%%{");
}

/** A JSON string as a native quoted template: the same characters, `${`/`%{` sequences left to interpolate as hcl's JSON syntax does. */
function quoted(text: string): string {
  let out = '"';
  for (const c of text) {
    const code = c.codePointAt(0) ?? 0;
    if (c === '"') out += '\\"';
    else if (c === "\\") out += "\\\\";
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else if (code < 0x20) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += c;
  }
  return `${out}"`;
}
