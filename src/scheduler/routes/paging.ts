/**
 * Nomad's paginator (nomad/state/paginator): items come in index order
 * (reversed with `reverse=true`); `next_token` seeks to the first item whose
 * token is not before it (the token need not exist); the filter runs before
 * counting; when item `per_page + 1` matches, its token is the next token and
 * it is not returned. No token on the last page.
 */

export interface PageRequest {
  /** ≤ 0: no limit. */
  perPage: number;
  nextToken: string;
  reverse: boolean;
}

export interface Tokenizer<T> {
  token(item: T): string;
  /** Orders two tokens (negative: a before b). */
  compare(a: string, b: string): number;
}

export function pageRequest(query: URLSearchParams): PageRequest {
  // strconv.ParseInt(v, 10, 32): anything else is silently ignored (no paging).
  const raw = query.get("per_page") ?? "";
  const parsed = /^[+-]?\d+$/.test(raw) ? Number(raw) : NaN;
  const perPage = Number.isInteger(parsed) && parsed >= -2_147_483_648 && parsed <= 2_147_483_647 ? parsed : 0;
  return { perPage, nextToken: query.get("next_token") ?? "", reverse: query.get("reverse") === "true" };
}

export function paginate<T>(items: readonly T[], tokenizer: Tokenizer<T>, request: PageRequest, matches: (item: T) => boolean): { items: T[]; nextToken: string } {
  const ordered = request.reverse ? [...items].reverse() : items;
  const out: T[] = [];
  for (const item of ordered) {
    if (request.nextToken !== "") {
      const c = tokenizer.compare(tokenizer.token(item), request.nextToken);
      if (request.reverse ? c > 0 : c < 0) continue;
    }
    if (!matches(item)) continue;
    if (request.perPage > 0 && out.length === request.perPage) return { items: out, nextToken: tokenizer.token(item) };
    out.push(item);
  }
  return { items: out, nextToken: "" };
}

const lexical = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** `<Namespace>.<ID>`, split at the first dot: namespace, then ID, each lexically. */
export function namespaceIdTokenizer<T extends { Namespace: string; ID: string }>(): Tokenizer<T> {
  const split = (t: string): [string, string] => {
    const dot = t.indexOf(".");
    return dot < 0 ? [t, ""] : [t.slice(0, dot), t.slice(dot + 1)];
  };
  return {
    token: (item) => `${item.Namespace}.${item.ID}`,
    compare: (a, b) => {
      const [na, ia] = split(a);
      const [nb, ib] = split(b);
      return lexical(na, nb) || lexical(ia, ib);
    },
  };
}

/** `<CreateIndex>.<ID>`: the index numerically, then the ID; an unparsable index compares as text. */
export function createIndexIdTokenizer<T extends { CreateIndex: number; ID: string }>(): Tokenizer<T> {
  const split = (t: string): [number, string, string] => {
    const dot = t.indexOf(".");
    const head = dot < 0 ? t : t.slice(0, dot);
    return [/^\d+$/.test(head) ? Number(head) : NaN, head, dot < 0 ? "" : t.slice(dot + 1)];
  };
  return {
    token: (item) => `${item.CreateIndex}.${item.ID}`,
    compare: (a, b) => {
      const [xa, ha, ia] = split(a);
      const [xb, hb, ib] = split(b);
      if (Number.isNaN(xa) || Number.isNaN(xb)) return lexical(ha, hb) || lexical(ia, ib);
      return xa - xb || lexical(ia, ib);
    },
  };
}

/** `<ID>` (nodes; and every create-index list when `prefix` is given, since the prefix index is by ID). */
export function idTokenizer<T extends { ID: string }>(): Tokenizer<T> {
  return { token: (item) => item.ID, compare: lexical };
}
