/**
 * Header names: the specification renames the products' headers
 * (`X-Nomad-Index` → `X-Scheduler-Index`, `X-Consul-*` → `X-Registry-*`).
 * Off-the-shelf clients of the real products only read the original names, so
 * by default every such header is sent under both names and both token
 * headers are accepted (DESIGN.md §4); `--no-compat-headers` turns that off.
 */

export interface HeaderFamily {
  /** The specification's prefix, e.g. `X-Scheduler-`. */
  readonly spec: string;
  /** The real product's prefix, e.g. `X-Nomad-`. */
  readonly compat: string;
}

export const SCHEDULER_HEADERS: HeaderFamily = { spec: "X-Scheduler-", compat: "X-Nomad-" };
export const REGISTRY_HEADERS: HeaderFamily = { spec: "X-Registry-", compat: "X-Consul-" };

export class HeaderNames {
  constructor(
    readonly family: HeaderFamily,
    readonly compat: boolean,
  ) {}

  /** The wire names for a suffix such as `Index`: the specification's, then (with compat) the product's. */
  names(suffix: string): string[] {
    const spec = this.family.spec + suffix;
    return this.compat ? [spec, this.family.compat + suffix] : [spec];
  }

  set(headers: Headers, suffix: string, value: string): void {
    for (const name of this.names(suffix)) headers.set(name, value);
  }

  /** `set` on a header record that is yet to become a response's headers. */
  put(headers: Record<string, string>, suffix: string, value: string): void {
    for (const name of this.names(suffix)) headers[name] = value;
  }

  /** The first non-empty value among the accepted names for `suffix`. */
  read(headers: Pick<Headers, "get">, suffix: string): string | undefined {
    for (const name of this.names(suffix)) {
      const v = headers.get(name);
      if (v !== null && v !== "") return v;
    }
    return undefined;
  }
}
