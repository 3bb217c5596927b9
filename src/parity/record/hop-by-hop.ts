/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1):
 * a proxy neither forwards nor records them, and the names the
 * `Connection` header lists are such headers too.
 */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);

export function isHopByHop(lowerCaseName: string, connection: string | string[] | undefined): boolean {
  if (HOP_BY_HOP.has(lowerCaseName)) return true;
  if (connection === undefined) return false;
  const listed = Array.isArray(connection) ? connection.join(",") : connection;
  return listed
    .toLowerCase()
    .split(",")
    .some((name) => name.trim() === lowerCaseName);
}

/** A flat raw header list (`[name, value, name, value, …]`, as node gives and takes it) without the hop-by-hop pairs and those in `dropAlso` (lower case). */
export function forwardedRawHeaders(raw: readonly string[], dropAlso: ReadonlySet<string> = new Set()): string[] {
  const connection: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === "connection") connection.push(raw[i + 1]!);
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (dropAlso.has(name) || isHopByHop(name, connection.length ? connection : undefined)) continue;
    kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}
