/**
 * Resolving a selector during evaluation (go-bexpr evaluate.go getValue, v0.1.13): the names an
 * enclosing `any`/`all` bound come first, then the datum through pointerstructure; a key missing as
 * the last segment under a map is "not present" (the operator decides), anything else an error.
 */
import { evalError } from "../errors.js";
import type { GoValue } from "../values/go-value.js";
import { pointerGet, pointerString } from "../values/pointer.js";

export interface LocalVariable {
  name: string;
  /** the selector path the name stands for, or null when it is a key/index with a known value */
  path: string[] | null;
  value: GoValue | null;
}

export type Resolved = { present: true; val: GoValue } | { present: false };

/** getValue: local variables first, then the datum; a missing last key under a map is "not present". */
export function getValue(datum: GoValue, path0: string[], locals: LocalVariable[]): Resolved {
  let path = path0;
  if (path.length !== 0 && locals.length > 0) {
    for (let i = locals.length - 1; i >= 0; i--) {
      const name = path[0]!;
      const lv = locals[i]!;
      if (name !== lv.name) continue;
      if (lv.path === null) {
        if (path.length > 1) {
          const goType = lv.value!.kind === "int" ? "int" : "string";
          evalError(`${pointerString([name])} references a ${goType} so ${pointerString(path)} is invalid`);
        }
        return { present: true, val: lv.value! };
      }
      path = [...lv.path, ...path.slice(1)];
    }
  }
  const r = pointerGet(datum, path);
  if (r.ok) return { present: true, val: r.val };
  if (r.notFound && path.length >= 2) {
    const parent = pointerGet(datum, path.slice(0, -1));
    if (parent.ok && parent.val.kind === "map") return { present: false };
  }
  return evalError(`error finding value in datum: ${r.msg}`);
}
