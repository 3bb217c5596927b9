/**
 * Secrets kept out of the artifacts users are told to keep (the tape, the
 * request journal, `/_standin/requests`): `Authorization`, every token header
 * (`X-Nomad-Token`, `X-Consul-Token`, the specification's `X-Scheduler-Token`
 * and `X-Registry-Token`), `?token=` and the control token.
 *
 * A secret is written as a reference a replay can turn back into it:
 *
 *   standin-redacted:<service>:<reference>   a credential the service's state
 *                                            knows (an ACL token by its
 *                                            accessor, a token signed by an
 *                                            emulator-held key by its claims)
 *   standin-redacted:control-token           the control token
 *   standin-redacted:sha256:<16 hex>         anything else (a wrong token, a
 *                                            token signed by the user's key)
 *
 * A replay runs the same requests against the same state, so at each request
 * the service knows the same credentials it knew when it was recorded and
 * `reveal` finds the secret again; an unknown secret stays the placeholder,
 * which no state knows either, so it is refused the same way.
 */
import { createHash } from "node:crypto";

export const REDACTED_PREFIX = "standin-redacted:";
const CONTROL_TOKEN = `${REDACTED_PREFIX}control-token`;

/** What a service can say about a secret presented to it. */
export interface Credentials {
  /** A reference to `secret` safe to write down (an accessor ID), or undefined when the state does not know it. */
  reference(secret: string): string | undefined;
  /** The secret a reference stands for in the current state. */
  secret(reference: string): string | undefined;
}

export interface Redactor {
  /**
   * An answer's body with every `"SecretID": "<secret>"` written as a
   * reference (an ACL token's create, read or bootstrap answer carries its
   * secret); the same bytes otherwise. The replay applies it to its own
   * answers before comparing.
   */
  body<B extends string | Uint8Array>(body: B): B;
  headers(headers: Record<string, string>): Record<string, string>;
  /** A path with its query (`/v1/kv/a?token=…`). */
  path(pathAndQuery: string): string;
  /** A query string alone (`?token=…`, or ""). */
  query(query: string): string;
}

/** Header names whose value is a credential (lower case, as Headers lists them). */
export function isSecretHeader(name: string): boolean {
  return name === "authorization" || name.endsWith("-token");
}

/**
 * Secrets beyond the ones every redactor knows, for artifacts that also carry
 * another product's credentials (a recording of a real ESP carries its API
 * key as `?key=` or `X-Api-Key`).
 */
export interface ExtraSecrets {
  /** Query parameter names whose value is a secret, besides `token`. */
  readonly queryNames?: readonly string[];
  /** Header names (lower case) whose value is a secret, besides `isSecretHeader`'s. */
  readonly headerNames?: readonly string[];
}

/** Builds the redactor from the services' credentials and the control token. */
export function createRedactor(services: ReadonlyArray<{ name: string; credentials?: Credentials }>, controlToken?: string, extra: ExtraSecrets = {}): Redactor {
  const queryNames = new Set(["token", ...(extra.queryNames ?? [])]);
  const headerNames = new Set(extra.headerNames ?? []);
  const secretHeader = (name: string): boolean => isSecretHeader(name) || headerNames.has(name);
  const conceal = (secret: string): string => {
    if (secret.startsWith(REDACTED_PREFIX)) return secret;
    if (controlToken !== undefined && secret === controlToken) return CONTROL_TOKEN;
    for (const service of services) {
      const reference = service.credentials?.reference(secret);
      if (reference !== undefined) return `${REDACTED_PREFIX}${service.name}:${reference}`;
    }
    return `${REDACTED_PREFIX}sha256:${createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16)}`;
  };
  const headers = (record: Record<string, string>): Record<string, string> => {
    let out: Record<string, string> | undefined;
    for (const name in record) {
      if (!secretHeader(name)) continue;
      out ??= { ...record };
      out[name] = name === "authorization" ? concealAuthorization(record[name]!, conceal) : conceal(record[name]!);
    }
    return out ?? record;
  };
  // The cheap look first: most queries name no secret at all (`%` may spell a name percent-encoded).
  const needles = [...queryNames].map((name) => `${name}=`);
  const mayHoldSecret = (search: string): boolean => search.includes("%") || needles.some((needle) => search.includes(needle));
  const query = (search: string): string => (mayHoldSecret(search) ? redactQuery(search, conceal, queryNames) : search);
  const path = (whole: string): string => {
    const mark = whole.indexOf("?");
    return mark < 0 ? whole : whole.slice(0, mark) + query(whole.slice(mark));
  };
  const body = <B extends string | Uint8Array>(content: B): B => {
    if (typeof content === "string")
      return (content.includes(SECRET_FIELD) ? content.replace(SECRET_VALUE, (_, gap: string, secret: string) => `${SECRET_FIELD}${gap}"${conceal(secret)}"`) : content) as B;
    if (content.byteLength === 0 || Buffer.from(content.buffer, content.byteOffset, content.byteLength).indexOf(SECRET_FIELD) < 0) return content;
    return new Uint8Array(Buffer.from(body(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString("utf8")), "utf8")) as B;
  };
  return { body, headers, path, query };
}

const SECRET_FIELD = '"SecretID":';
const SECRET_VALUE = /"SecretID":(\s*)"([^"\\]+)"/g;

/** `Bearer <secret>` keeps its scheme; any other value is concealed whole after its scheme word. */
function concealAuthorization(value: string, conceal: (secret: string) => string): string {
  const space = value.indexOf(" ");
  if (space < 0) return conceal(value);
  const credential = value.slice(space + 1).trim();
  return credential === "" ? value : `${value.slice(0, space)} ${conceal(credential)}`;
}

/** `?a=1&token=s3cret` → `?a=1&token=standin-redacted:…` (a percent-encoded name counts too). */
function redactQuery(search: string, conceal: (secret: string) => string, names: ReadonlySet<string>): string {
  const body = search.startsWith("?") ? search.slice(1) : search;
  let changed = false;
  const parts = body.split("&").map((part) => {
    const eq = part.indexOf("=");
    if (eq < 0 || !names.has(decode(part.slice(0, eq).replace(/\+/g, " ")))) return part;
    changed = true;
    return `${part.slice(0, eq)}=${encodeURIComponent(conceal(decode(part.slice(eq + 1).replace(/\+/g, " "))))}`;
  });
  return changed ? `${search.startsWith("?") ? "?" : ""}${parts.join("&")}` : search;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The reverse, for a replay: a header record or path whose references are
 * turned back into the secrets the replaying state knows (placeholders it
 * cannot resolve are sent as they are).
 */
export function createRevealer(services: ReadonlyArray<{ name: string; credentials?: Credentials }>): {
  headers(h: Record<string, string>): Record<string, string>;
  path(p: string): string;
} {
  const reveal = (text: string): string => {
    if (!text.startsWith(REDACTED_PREFIX)) return text;
    const rest = text.slice(REDACTED_PREFIX.length);
    const colon = rest.indexOf(":");
    if (colon < 0) return text;
    const service = services.find((s) => s.name === rest.slice(0, colon));
    return service?.credentials?.secret(rest.slice(colon + 1)) ?? text;
  };
  return {
    headers(record) {
      const out: Record<string, string> = {};
      for (const name in record) {
        const value = record[name]!;
        if (!isSecretHeader(name) || !value.includes(REDACTED_PREFIX)) out[name] = value;
        else if (name === "authorization") {
          const space = value.indexOf(" ");
          out[name] = space < 0 ? reveal(value) : `${value.slice(0, space)} ${reveal(value.slice(space + 1))}`;
        } else out[name] = reveal(value);
      }
      return out;
    },
    path(whole) {
      if (!whole.includes(encodeURIComponent(REDACTED_PREFIX)) && !whole.includes(REDACTED_PREFIX)) return whole;
      const mark = whole.indexOf("?");
      const parts = whole
        .slice(mark + 1)
        .split("&")
        .map((part) => {
          const eq = part.indexOf("=");
          if (eq < 0 || decode(part.slice(0, eq)) !== "token") return part;
          return `${part.slice(0, eq)}=${encodeURIComponent(reveal(decode(part.slice(eq + 1))))}`;
        });
      return `${whole.slice(0, mark)}?${parts.join("&")}`;
    },
  };
}
