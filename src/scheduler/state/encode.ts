/**
 * Nomad's encoder rule for structs tagged `_struct bool \`codec:",omitempty"\``
 * (Allocation, Evaluation, Plan, NetworkResource, Port, AllocatedPortMapping):
 * go-msgpack makes every field of such a struct omitempty, so their JSON
 * leaves out `""`, 0, false, null, empty lists and maps, the zero time and
 * nested structs whose fields are all zero.
 *
 * Only the wire is trimmed: the views keep every field, because filters
 * (go-bexpr) run over the Go struct, where an omitted field still exists.
 */

/** Go's zero `time.Time` as RFC 3339. */
const ZERO_TIME = "0001-01-01T00:00:00Z";

/**
 * Fields that are Go maps: an empty map is dropped, but a non-empty one is
 * kept even when its values are zero (`QueuedAllocations: {"web": 0}`), unlike
 * a struct whose fields are all zero.
 */
const MAP_FIELDS: ReadonlySet<string> = new Set(["QueuedAllocations", "FailedTGAllocs", "ClassEligibility", "TaskStates", "TaskResources", "Meta"]);

/** The object without its zero-valued top-level fields (struct-level omitempty). */
export function omitEmpty<T extends Record<string, unknown>>(value: T): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    if (MAP_FIELDS.has(key) ? isEmptyMap(field) : isZero(field)) continue;
    out[key] = field;
  }
  return out as Partial<T>;
}

function isEmptyMap(value: unknown): boolean {
  return value === null || value === undefined || (typeof value === "object" && Object.keys(value).length === 0);
}

/** Go's zero value as the JSON handle sees it (a struct is zero when all its fields are). */
export function isZero(value: unknown): boolean {
  if (value === null || value === undefined || value === "" || value === 0 || value === 0n || value === false || value === ZERO_TIME) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isZero);
  return false;
}
