/**
 * Go's ordering as the diff lists need it: string comparison by bytes and the
 * insertion sort `sort.Sort` runs for short slices (its exact order matters
 * when `ObjectDiff.Less` calls two diffs equal).
 */
import { compareBytewise } from "../json.js";

export function goLess(a: string, b: string): boolean {
  return compareBytewise(a, b) < 0;
}

/** Go's insertionSort (what sort.Sort runs for short slices). */
export function goSort<T>(items: T[], less: (a: T, b: T) => boolean): T[] {
  for (let i = 1; i < items.length; i++) {
    for (let j = i; j > 0 && less(items[j]!, items[j - 1]!); j--) {
      const t = items[j]!;
      items[j] = items[j - 1]!;
      items[j - 1] = t;
    }
  }
  return items;
}
