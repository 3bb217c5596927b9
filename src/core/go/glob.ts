/**
 * ryanuber/go-glob's Glob, which Nomad matches namespace globs in ACL rules
 * and datacenter wildcards with: `*` stands for any run of characters (line
 * breaks included); nothing else is special. Matched the way go-glob does,
 * piece by piece left to right, not through a regular expression.
 */
export function goGlob(pattern: string, subject: string): boolean {
  if (pattern === "") return subject === "";
  if (pattern === "*") return true;
  const parts = pattern.split("*");
  if (parts.length === 1) return subject === pattern;
  const leadingGlob = pattern.startsWith("*");
  const trailingGlob = pattern.endsWith("*");
  const end = parts.length - 1;
  let rest = subject;
  for (let i = 0; i < end; i++) {
    const part = parts[i]!;
    const at = rest.indexOf(part);
    if (i === 0 ? !leadingGlob && at !== 0 : at < 0) return false;
    rest = rest.slice(at + part.length);
  }
  return trailingGlob || rest.endsWith(parts[end]!);
}
