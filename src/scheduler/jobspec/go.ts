/**
 * Go standard-library behaviours the job pipeline reproduces byte for byte:
 * time.Duration units (nanoseconds), strconv.Quote (what `%q` prints in
 * Nomad's error texts) and path.Base / path.Join (artifact destinations and
 * the allocation-directory escape check).
 */

// Time units (nanoseconds, as time.Duration)

export const SECOND = 1_000_000_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

/** strconv.Quote (what Go's %q prints for a string). */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const cp = ch.codePointAt(0) ?? 0;
    switch (ch) {
      case '"':
        out += '\\"';
        continue;
      case "\\":
        out += "\\\\";
        continue;
      case "\x07":
        out += "\\a";
        continue;
      case "\b":
        out += "\\b";
        continue;
      case "\f":
        out += "\\f";
        continue;
      case "\n":
        out += "\\n";
        continue;
      case "\r":
        out += "\\r";
        continue;
      case "\t":
        out += "\\t";
        continue;
      case "\v":
        out += "\\v";
        continue;
    }
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, "0")}`;
    else if (cp >= 0x80 && cp < 0xa0) out += `\\u${cp.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

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
