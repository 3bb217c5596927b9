/**
 * Decodes a job block into the api.Job JSON, struct by struct, the way
 * gohcl does with jobspec2's custom decoders: arguments and blocks named by
 * the `hcl` tags (api-structs.ts), unknown names rejected, pointer fields
 * left null when unset, free-form maps (`config`, scaling `policy`) built
 * from blocks and attributes, `meta`/`env` accepted in attribute form, the
 * shorthand arguments of `constraint` and `affinity`, and task `scaling
 * "cpu"|"mem"` blocks. Diagnostics are collected, not thrown, so one answer
 * lists every problem as Nomad's does.
 */
import { type Attribute, startSpan } from "../../../core/hcl/ast.js";
import { errorDiag, HclLimitError, type Value } from "../../../core/hcl/index.js";
import { structFields, type FieldSpec, zeroValue } from "./api-structs.js";
import { type BodyView, type BoundBlock, checkSchema, type DecodeContext, defRange, viewBody } from "./body.js";
import { convertToGo, toStringMap } from "./values.js";

export type Obj = Record<string, unknown>;

/** Arguments written as `name = {…}` that jobspec2 also accepts besides the block form. */
const ATTRIBUTE_FORM: Readonly<Record<string, readonly string[]>> = { Job: ["meta"], TaskGroup: ["meta"], Task: ["env", "meta"] };

/** Blocks jobspec2 reads outside the api struct tags. */
const EXTRA_BLOCKS: Readonly<Record<string, Readonly<Record<string, { labels: number; labelName: string }>>>> = {
  Job: { vault: { labels: 0, labelName: "" }, task: { labels: 1, labelName: "name" } },
  TaskGroup: { vault: { labels: 0, labelName: "" } },
};

/** How many labels blocks of a field's type take, and the label's name. */
function labelsOf(type: string): { labels: number; labelName: string } {
  const target = /^(?:list|one|labelmap):(\w+)$/.exec(type)?.[1];
  if (!target) return { labels: 0, labelName: "" };
  const label = structFields(target).find((f) => f.kind === "label");
  return label ? { labels: 1, labelName: label.hcl || "name" } : { labels: 0, labelName: "" };
}

interface StructSchema {
  readonly fields: readonly FieldSpec[];
  readonly attrNames: readonly string[];
  readonly required: readonly string[];
  readonly blockSpecs: ReadonlyMap<string, { labels: number; labelName: string }>;
}

const schemas = new Map<string, StructSchema>();

/** A struct's arguments and blocks, worked out once per struct (a file of thousands of blocks decodes each with it). */
function structSchema(name: string): StructSchema {
  const known = schemas.get(name);
  if (known) return known;
  const fields = structFields(name);
  const blockSpecs = new Map<string, { labels: number; labelName: string }>();
  for (const f of fields) if (f.kind === "block") blockSpecs.set(f.hcl, labelsOf(f.type));
  for (const [type, spec] of Object.entries(EXTRA_BLOCKS[name] ?? {})) blockSpecs.set(type, spec);
  if (name === "Task") blockSpecs.set("scaling", { labels: 1, labelName: "name" });
  const schema: StructSchema = {
    fields,
    attrNames: fields.filter((f) => f.kind === "attr" || f.kind === "req").map((f) => f.hcl),
    required: fields.filter((f) => f.kind === "req").map((f) => f.hcl),
    blockSpecs,
  };
  schemas.set(name, schema);
  return schema;
}

/** Go's encoding/json writes map keys sorted; free-form and string maps follow that order. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const obj = value as Obj;
    return Object.fromEntries(
      Object.keys(obj)
        .sort()
        .map((k) => [k, sortKeys(obj[k])]),
    );
  }
  return value;
}

/**
 * The most `group` and `task` blocks (together, `dynamic` ones included) one
 * job file may decode to. Nomad has no such limit; standin decodes on the
 * event loop, and each group or task is answered as a whole canonical
 * TaskGroup or Task (an empty `task "t" {}` of 14 bytes costs about 0.1 ms),
 * so this is what keeps a job file within MAX_JOB_SOURCE_BYTES under about
 * 100 ms however its bytes are spent.
 */
export const MAX_GROUPS_AND_TASKS = 500;

export class JobDecoder {
  private groupsAndTasks = 0;
  constructor(private readonly ctx: DecodeContext) {}

  /** Decodes one struct from a body; `labels` are the labels of its block. */
  decodeStruct(name: string, view: BodyView, labels: readonly string[]): Obj {
    if (name === "Constraint" || name === "Affinity") return this.decodePlacement(name, view);
    if ((name === "TaskGroup" || name === "Task") && ++this.groupsAndTasks > MAX_GROUPS_AND_TASKS) {
      const at = this.ctx.file.range(view.missingItem.start, view.missingItem.end);
      throw new HclLimitError(
        errorDiag("Too many groups and tasks", `This job file has more than ${MAX_GROUPS_AND_TASKS} group and task blocks; standin decodes at most ${MAX_GROUPS_AND_TASKS}.`, at),
      );
    }
    const { fields, attrNames, blockSpecs, required } = structSchema(name);
    const attributeForm = ATTRIBUTE_FORM[name] ?? [];

    // meta = {…} / env = {…}: taken out before the schema check, as decodeAsAttribute does.
    const attrMaps = new Map<string, Obj | null>();
    let remaining = view;
    for (const mapName of attributeForm) {
      const attr = remaining.attributes.find((a) => a.attr.name === mapName);
      if (!attr) continue;
      remaining = { ...remaining, attributes: remaining.attributes.filter((a) => a !== attr) };
      const block = remaining.blocks.find((b) => b.block.type === mapName);
      if (block) {
        this.ctx.error(
          `Duplicate ${mapName} block`,
          `${mapName} may not be defined more than once. Another definition is defined at ${this.ctx.rangeText(attr.attr)}.`,
          defRange(block.block),
        );
        remaining = { ...remaining, blocks: remaining.blocks.filter((b) => b.block.type !== mapName) };
        continue;
      }
      const value = this.ctx.evaluate(attr.ev, attr.attr);
      if (value === undefined) continue;
      const converted = toStringMap(value);
      if (converted.ok) attrMaps.set(mapName, converted.value as Obj);
      else this.ctx.error(converted.summary, converted.detail, startSpan(attr.attr.expr));
    }

    const byType = checkSchema(this.ctx, remaining, { attributes: attrNames, required, blocks: blockSpecs });
    const out: Obj = {};
    for (const f of fields) {
      const value = this.decodeField(f, remaining, byType, labels, attrMaps);
      // Nomad's encoder skips an unset `omitempty` field rather than writing null.
      if (!(f.omitEmpty && value === null)) out[f.field] = value;
    }
    if (name === "Task") this.taskScaling(out, byType.get("scaling") ?? []);
    if (name === "Job" || name === "TaskGroup") {
      const vaults = byType.get("vault") ?? [];
      if (vaults.length > 1) this.duplicate("vault", vaults);
      if (vaults[0]) out["__vault"] = this.decodeStruct("Vault", this.view(vaults[0]), []);
    }
    if (name === "Job") out["__tasks"] = (byType.get("task") ?? []).map((b) => this.decodeStruct("Task", this.view(b), b.labels));
    if (name === "TaskGroup") this.groupScaling(out, byType.get("scaling") ?? []);
    return out;
  }

  private view(b: BoundBlock): BodyView {
    return viewBody(this.ctx, b.block, b.ev);
  }

  private duplicate(type: string, blocks: readonly BoundBlock[]): void {
    const [first, second] = blocks;
    if (!first || !second) return;
    this.ctx.error(`Duplicate ${type} block`, `Only one ${type} block is allowed. Another was defined at ${this.ctx.rangeText(defRange(first.block))}.`, defRange(second.block));
  }

  private decodeField(f: FieldSpec, view: BodyView, byType: Map<string, BoundBlock[]>, labels: readonly string[], attrMaps: Map<string, Obj | null>): unknown {
    if (f.kind === "-") return zeroValue(f.type);
    if (f.kind === "label") return labels[0] ?? zeroValue(f.type);
    if (f.kind === "attr" || f.kind === "req") {
      const bound = view.attributes.find((a) => a.attr.name === f.hcl);
      if (!bound) return zeroValue(f.type);
      return this.attribute(f, bound.attr, this.ctx.evaluate(bound.ev, bound.attr));
    }
    if (attrMaps.has(f.hcl)) return attrMaps.get(f.hcl);
    const blocks = byType.get(f.hcl) ?? [];
    if (f.hcl === "scaling" && f.type === "list:ScalingPolicy") return null; // task scaling: see taskScaling
    const [kind, target = ""] = f.type.split(":");
    if (kind === "list") return blocks.length ? blocks.map((b) => this.decodeStruct(target, this.view(b), b.labels)) : null;
    if (kind === "labelmap") return this.labelMap(target, blocks);
    if (blocks.length > 1) this.duplicate(f.hcl, blocks);
    const first = blocks[0];
    if (!first) return null;
    if (kind === "one") return this.decodeStruct(target, this.view(first), first.labels);
    if (f.type === "anymap") return this.freeForm(this.view(first));
    if (f.type === "strmap") return this.stringMap(this.view(first));
    if (f.type === "strlistmap") return this.stringListMap(this.view(first));
    return null;
  }

  /**
   * Blocks decoded into a Go map keyed by their label (`TaskGroup.Volumes`):
   * gohcl allows any number of them and sets one map entry per block, so two
   * blocks with the same label are no error, the later one wins; the map is
   * written with sorted keys as Go's encoder does.
   */
  private labelMap(target: string, blocks: readonly BoundBlock[]): Obj | null {
    if (!blocks.length) return null;
    const map = new Map<string, Obj>();
    for (const b of blocks) map.set(b.labels[0] ?? "", this.decodeStruct(target, this.view(b), b.labels));
    return Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private attribute(f: FieldSpec, attr: Attribute, value: Value | undefined): unknown {
    if (value === undefined) return zeroValue(f.type);
    const type = f.type.replace(/^\?/, "");
    if (value === null && type !== "dur") return zeroValue(f.type);
    const converted = convertToGo(value, type, f.field);
    if (converted.ok) return converted.value;
    this.ctx.error(converted.summary, converted.detail, startSpan(attr.expr));
    return zeroValue(f.type);
  }

  /** A `map[string]string` block: every argument a string. */
  private stringMap(view: BodyView): Obj {
    checkSchema(this.ctx, { ...view, attributes: [] }, { attributes: [], blocks: new Map() });
    const out: Obj = {};
    for (const { attr, ev } of view.attributes) {
      const value = this.ctx.evaluate(ev, attr);
      if (value === undefined) continue;
      const converted = value === null ? undefined : convertToGo(value, "str", attr.name);
      if (converted?.ok) out[attr.name] = converted.value;
      else this.ctx.error("Unsuitable value type", "Unsuitable value: string required", startSpan(attr.expr));
    }
    return out;
  }

  /** A check `header` block: every argument a list of strings. */
  private stringListMap(view: BodyView): Obj {
    checkSchema(this.ctx, { ...view, attributes: [] }, { attributes: [], blocks: new Map() });
    const out: Obj = {};
    for (const { attr, ev } of view.attributes) {
      const value = this.ctx.evaluate(ev, attr);
      if (value === undefined) continue;
      const converted = convertToGo(value, "strs", attr.name);
      if (converted.ok) out[attr.name] = converted.value;
      else this.ctx.error(converted.summary, converted.detail, startSpan(attr.expr));
    }
    return out;
  }

  /**
   * A free-form `map[string]interface{}` (driver `config`, scaling `policy`,
   * proxy `config`): arguments keep their values, except that an object
   * literal is wrapped in a one-element list; nested blocks become lists of
   * objects, labels nesting as single-key objects (jobspec2's BlocksAsAttrs).
   */
  freeForm(view: BodyView): Obj {
    const out: Obj = {};
    for (const { attr, ev } of view.attributes) {
      const value = this.ctx.evaluate(ev, attr, this.ctx.mapDiags);
      if (value === undefined) continue;
      out[attr.name] = attr.expr.k === "object" ? [value] : value;
    }
    for (const b of view.blocks) {
      let element: unknown = this.freeForm(this.view(b));
      for (const label of [...b.labels].reverse()) element = { [label]: [element] };
      const list = Array.isArray(out[b.block.type]) && !view.attributes.some((a) => a.attr.name === b.block.type) ? (out[b.block.type] as unknown[]) : [];
      list.push(element);
      out[b.block.type] = list;
    }
    return out;
  }

  /** jobspec2's constraint/affinity decoders: the generic arguments plus operator shorthands. */
  private decodePlacement(name: "Constraint" | "Affinity", view: BodyView): Obj {
    const shorthands =
      name === "Constraint"
        ? ["distinct_property", "distinct_hosts", "regexp", "version", "semver", "set_contains", "set_contains_all", "set_contains_any", "attribute_is_set", "attribute_is_not_set"]
        : ["version", "semver", "regexp", "set_contains", "set_contains_all", "set_contains_any"];
    const attributes = ["attribute", "value", "operator", ...(name === "Affinity" ? ["weight"] : []), ...shorthands];
    checkSchema(this.ctx, view, { attributes, blocks: new Map() });
    const values = new Map<string, string | boolean | number>();
    for (const { attr, ev } of view.attributes) {
      if (!attributes.includes(attr.name)) continue;
      const value = this.ctx.evaluate(ev, attr);
      if (value === undefined || value === null) continue;
      const type = attr.name === "distinct_hosts" ? "bool" : attr.name === "weight" ? "int" : "str";
      const converted = convertToGo(value, type, attr.name === "weight" ? "Weight" : attr.name);
      if (converted.ok) values.set(attr.name, converted.value as string | boolean | number);
      else this.ctx.error("Incorrect attribute value type", `Inappropriate value for attribute "${attr.name}": ${converted.detail.replace(/^Unsuitable value: /, "")}.`, attr.expr);
    }
    const str = (k: string): string => (values.get(k) as string | undefined) ?? "";
    const out: Obj = { LTarget: str("attribute"), RTarget: str("value"), Operand: str("operator") };
    if (name === "Affinity") out["Weight"] = values.has("weight") ? values.get("weight") : null;
    const operators =
      name === "Constraint" ? ["version", "semver", "regexp", "set_contains"] : ["version", "semver", "regexp", "set_contains_any", "set_contains_all", "set_contains"];
    for (const op of operators) {
      if (str(op) !== "") {
        out["Operand"] = op;
        out["RTarget"] = str(op);
      }
    }
    if (name === "Constraint") {
      // Any non-null distinct_hosts sets the operand and writes the bool as RTarget ("true"/"false"), as decodeConstraint's fmt.Sprint does.
      const distinctHosts = values.get("distinct_hosts");
      if (distinctHosts !== undefined) {
        out["Operand"] = "distinct_hosts";
        out["RTarget"] = String(distinctHosts);
      }
      if (str("distinct_property") !== "") {
        out["Operand"] = "distinct_property";
        out["LTarget"] = str("distinct_property");
      }
    }
    if (out["Operand"] === "") out["Operand"] = "=";
    return out;
  }

  /** Task `scaling "cpu"|"mem"` blocks → ScalingPolicies with vertical types. */
  private taskScaling(task: Obj, blocks: readonly BoundBlock[]): void {
    const seen = new Map<string, BoundBlock>();
    const policies: Obj[] = [];
    for (const b of blocks) {
      const label = (b.labels[0] ?? "").toLowerCase();
      const policyType = label === "cpu" ? "vertical_cpu" : label === "mem" ? "vertical_mem" : undefined;
      if (!policyType) {
        this.ctx.error("Invalid scaling policy name", 'scaling policy name must be "cpu" or "mem"', b.block.labelSpans[0]);
        continue;
      }
      const prev = seen.get(label);
      if (prev) {
        this.ctx.error(
          `Duplicate scaling "${label}" block`,
          `Only one scaling ${label} block is allowed. Another was defined at ${this.ctx.rangeText(defRange(prev.block))}.`,
          defRange(b.block),
        );
        continue;
      }
      seen.set(label, b);
      const policy = this.decodeStruct("ScalingPolicy", this.view(b), []);
      if (policy["Type"] === "") policy["Type"] = policyType;
      else if (policy["Type"] !== policyType) {
        this.ctx.error("Invalid scaling policy type", `Invalid policy type, expected "${String(policy["Type"])}" but found "${policyType}"`, defRange(b.block));
        continue;
      }
      policies.push(policy);
    }
    task["ScalingPolicies"] = policies.length ? policies : null;
  }

  /** Group `scaling`: type defaults to horizontal; `max` is required. */
  private groupScaling(group: Obj, blocks: readonly BoundBlock[]): void {
    const scaling = group["Scaling"] as Obj | null;
    const block = blocks[0];
    if (!scaling || !block) return;
    if (scaling["Type"] === "") scaling["Type"] = "horizontal";
    if (scaling["Max"] !== null && scaling["Type"] === "horizontal") return;
    const view = this.view(block);
    if (!view.attributes.some((a) => a.attr.name === "max")) {
      this.ctx.error("Missing required argument", 'The argument "max" is required, but no definition was found.', view.missingItem);
    }
    const typeAttr = view.attributes.find((a) => a.attr.name === "type");
    if (scaling["Type"] !== "horizontal" && typeAttr) {
      this.ctx.error("Invalid group scaling type", `task group scaling policy had invalid type: ${JSON.stringify(scaling["Type"])}`, typeAttr.attr.expr);
    }
  }
}
