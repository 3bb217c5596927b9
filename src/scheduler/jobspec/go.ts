/**
 * Go standard-library behaviours the job pipeline reproduces byte for byte:
 * time.Duration units (nanoseconds) and path.Base / path.Join (artifact
 * destinations and the allocation-directory escape check). strconv.Quote,
 * which Nomad's error texts print with `%q`, is core/go/strconv's.
 */

// Time units (nanoseconds, as time.Duration)

export const SECOND = 1_000_000_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export function pathBase(p: string): string {
  // Go's path.Base
  if (p === "") return ".";
  const trimmed = p.replace(/\/+$/, "");
  if (trimmed === "") return "/";
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}

export function pathJoin(...parts: string[]): string {
  // Go's path.Join (= filepath.Join on Unix): join non-empty parts and Clean
  const joined = parts.filter((p) => p !== "").join("/");
  if (joined === "") return "";
  const absolute = joined.startsWith("/");
  const out: string[] = [];
  for (const segment of joined.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute) out.push("..");
      continue;
    }
    out.push(segment);
  }
  const cleaned = (absolute ? "/" : "") + out.join("/");
  return cleaned === "" ? "." : cleaned;
}
