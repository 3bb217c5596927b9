/**
 * Whether a request asked for pretty-printed JSON. The products read the
 * `pretty` query parameter differently:
 * - Nomad: the key is present and its value is not "0" (`?pretty`, `?pretty=1`, `?pretty=false` all count);
 * - Consul: the key is present, whatever its value (`?pretty=0` counts too).
 */
export type PrettyStyle = "scheduler" | "registry";

export function wantsPretty(url: string | URL, style: PrettyStyle): boolean {
  // Most requests have no `pretty` (even percent-encoded): answer those without parsing the URL.
  if (typeof url === "string") {
    const query = url.indexOf("?");
    if (query < 0) return false;
    if (!url.includes("pretty", query) && !url.includes("%", query)) return false;
  }
  const params = (typeof url === "string" ? new URL(url) : url).searchParams;
  if (!params.has("pretty")) return false;
  return style === "registry" || params.get("pretty") !== "0";
}
