/**
 * The parts of mitchellh/pointerstructure v1.2.x go-bexpr relies on: parsing a JSON-pointer selector
 * (`"/Meta/foo"`), printing a pointer, and Pointer.Get walking a selector path through the Go-typed
 * datum with pointerstructure's error texts (`/Foo at part 0: couldn't find key: struct field with
 * name "Foo"`).
 */
import { goParseInt, goQuote } from "../../go/strconv.js";
import { classify, hasOwn, type GoValue } from "./go-value.js";
import { kindName } from "./type-names.js";

/** pointerstructure.Parse("/" + segments.join("/")).Parts */
export function parseJsonPointer(segments: string[]): string[] {
  const parts = segments.length === 0 ? [""] : segments;
  return parts.map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** pointerstructure Pointer.String() */
export function pointerString(parts: string[]): string {
  if (parts.length === 0) return "";
  return `/${parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`;
}

export type Lookup = { ok: true; val: GoValue } | { ok: false; notFound: boolean; msg: string };

/** pointerstructure Pointer.Get */
export function pointerGet(root: GoValue, parts: string[]): Lookup {
  const p = pointerString(parts);
  let cur = root;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    switch (cur.kind) {
      case "struct":
        if (!hasOwn(cur.v, part)) {
          return { ok: false, notFound: true, msg: `${p} at part ${i}: couldn't find key: struct field with name ${goQuote(part)}` };
        }
        cur = classify((cur.v as Record<string, unknown>)[part], { of: "struct", key: part, owner: cur.field });
        break;
      case "map":
        if (!hasOwn(cur.v, part)) return { ok: false, notFound: true, msg: `${p} at part ${i}: couldn't find key ${goQuote(part)}` };
        cur = classify((cur.v as Record<string, unknown>)[part], { of: "map", free: cur.free });
        break;
      case "slice": {
        const arr = cur.v as unknown[];
        // mapstructure.WeakDecode(string → int): "" is 0, else strconv.ParseInt(s, 0, 64)
        const idx = goParseInt(part === "" ? "0" : part);
        if (!idx.ok) return { ok: false, notFound: false, msg: `${p} at part ${i}: couldn't convert value ${goQuote(part)} to type int` };
        const n = idx.v as bigint;
        if (n < 0n || n >= BigInt(arr.length)) {
          return { ok: false, notFound: false, msg: `${p} at part ${i}: index ${n} is out of range (length = ${arr.length})` };
        }
        cur = classify(arr[Number(n)], { of: "slice", free: cur.free });
        break;
      }
      default:
        return { ok: false, notFound: false, msg: `${p}: at part ${i}, invalid value kind: ${kindName(cur.kind)}` };
    }
  }
  return { ok: true, val: cur };
}
