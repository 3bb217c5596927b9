/**
 * A Go type as go-bexpr v0.1.2 sees it through reflection, written out by hand: the emulator holds
 * plain JSON rows, so the Go struct a service filters on (Consul's `structs.Node`, `api.AgentService`, …)
 * is described with these builders. Field names are Go's (which is also what Consul's JSON uses);
 * fields Consul tags `bexpr:"-"` are listed as `excluded` (not selectable, so a selector naming one is
 * "not valid"), and unexported or unsupported fields are simply left out.
 *
 * Integer kinds are Go's 64-bit `int` / `uint64` (go-bexpr's CoerceInt uses ParseInt(v, 0, 0), which is
 * 64 bits wide); floats are float64.
 */

export type PrimitiveKind = "string" | "bool" | "int" | "uint" | "float";

export type FieldSchema =
  | { readonly kind: PrimitiveKind }
  /** `map[string]V`; `values` null when V is a type go-bexpr cannot select into (`interface{}`) */
  | { readonly kind: "map"; readonly values: FieldSchema | null }
  | { readonly kind: "slice"; readonly elements: FieldSchema }
  /** a struct, or (`pointer`) a pointer to one, which may be nil (`null` in the JSON) */
  | { readonly kind: "struct"; readonly fields: Readonly<Record<string, FieldSchema>>; readonly pointer: boolean; readonly excluded: readonly string[] };

export type StructSchema = Extract<FieldSchema, { kind: "struct" }>;

export const goString: FieldSchema = { kind: "string" };
export const goBool: FieldSchema = { kind: "bool" };
export const goInt: FieldSchema = { kind: "int" };
export const goUint: FieldSchema = { kind: "uint" };
export const goFloat: FieldSchema = { kind: "float" };

export function mapOf(values: FieldSchema | null): FieldSchema {
  return { kind: "map", values };
}

export function sliceOf(elements: FieldSchema): FieldSchema {
  return { kind: "slice", elements };
}

/** A struct; `excluded` names its `bexpr:"-"` fields (documentation: they are not selectable either way). */
export function goStruct(fields: Record<string, FieldSchema>, excluded: readonly string[] = []): StructSchema {
  return { kind: "struct", fields, pointer: false, excluded };
}

export function pointerTo(s: StructSchema): StructSchema {
  return { ...s, pointer: true };
}

export function isPrimitive(s: FieldSchema): s is { kind: PrimitiveKind } {
  return s.kind === "string" || s.kind === "bool" || s.kind === "int" || s.kind === "uint" || s.kind === "float";
}

/** The field a selector segment names below `s` (go-bexpr's SubFields, with a map's `<any>` key), if any. */
export function subField(s: FieldSchema, name: string): FieldSchema | undefined {
  switch (s.kind) {
    case "struct":
      return Object.hasOwn(s.fields, name) && !s.excluded.includes(name) ? s.fields[name] : undefined;
    case "map":
      return s.values ?? undefined;
    case "slice":
      // a slice's sub-fields are its elements' (a selector crosses a slice of structs without an index)
      return isPrimitive(s.elements) ? undefined : subField(s.elements, name);
    default:
      return undefined;
  }
}
