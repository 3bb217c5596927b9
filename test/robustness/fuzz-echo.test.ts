/**
 * Bad-input fuzzing of the echo service (the Cloud Endpoints echo sample
 * behind ESP or ESPv2): echo bodies that are malformed, wrongly typed, in
 * odd charsets and encodings, around the backend's 100 kB limit and past the
 * 16 MiB limit; API keys in every place; JWTs that are garbage, truncated,
 * re-encoded with wrongly typed header fields and claims, or validly signed
 * with odd claims; repeated and oversized headers. Both proxy dialects.
 * Every request is held to the invariants in harness.ts.
 */
import { gzipSync } from "node:zlib";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import {
  acceptEncoding,
  contentType,
  fuzz,
  headerEntries,
  headerValue,
  jsonBody,
  longString,
  method,
  mutated,
  pathSegment,
  queryString,
  repeatedHeader,
  timeoutFor,
  toJsonText,
  weirdString,
  weirdValue,
  type HeaderEntries,
} from "./arbitraries.js";
import { Harness, type FuzzRequest, type Oracle } from "./harness.js";

/**
 * The echo proxies and the sample backend document no 5xx of their own for
 * bad input (echo-esp.md: the backend's body errors are express's 400, 413
 * and 415 pages; every proxy refusal is a 4xx). The one 5xx the sample gives
 * is express's 500 page when `res.json` throws, as V8's JSON.stringify does
 * on a message nested a few thousand levels deep (docs/echo.md, "The echo
 * service"). Anything else fails.
 */
const EXPRESS_500_PAGE =
  '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Internal Server Error</pre>\n</body>\n</html>\n';
const ESP: Oracle = { documented5xx: (status, text, request) => status === 500 && text === EXPRESS_500_PAGE && request.path.startsWith("/echo") };

const SCHEMES = ["provider_jwt", "app_default_service_account", "provider_service_account", "provider_id_token", "identity_platform"] as const;
const AUTH_PATHS = ["/auth/info/providerjwt", "/auth/info/provideridtoken", "/auth/info/identityplatform"];

const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64url");

// ---- tokens ----------------------------------------------------------------------------------

interface Minted {
  scheme: string;
  token: string;
}

async function mint(h: Harness, body: unknown): Promise<string | undefined> {
  const res = await h.emu.echo.request("/_standin/echo/tokens", { method: "POST", body: JSON.stringify(body) });
  if (res.status !== 200) return undefined;
  return ((await res.json()) as { token: string }).token;
}

/** Tokens: real ones, tampered ones, re-encoded ones with odd fields, garbage. */
function tokenArbitrary(minted: Minted[]): fc.Arbitrary<string> {
  const real = fc.constantFrom(...minted.map((m) => m.token));
  const parts = real.map((t) => t.split(".") as [string, string, string]);
  const header = { alg: "RS256", kid: "standin-test-provider_jwt-1", typ: "JWT" };
  const claims = { iss: "jwt-client.endpoints.standin.test", sub: "1234", aud: "echo.standin.test", iat: 1767225600, exp: 1767229200, email: "a@b.test" };
  return fc.oneof(
    { weight: 2, arbitrary: real },
    // A real signature under a changed header or payload.
    { weight: 3, arbitrary: fc.tuple(parts, mutated(header)).map(([[, p, s], hd]) => `${b64(toJsonText(hd))}.${p}.${s}`) },
    { weight: 3, arbitrary: fc.tuple(parts, mutated(claims)).map(([[h, , s], c]) => `${h}.${b64(toJsonText(c))}.${s}`) },
    // Segments that are not base64url, not JSON, or missing.
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          parts,
          fc.nat(2),
          fc.oneof(
            weirdString.map(b64),
            weirdString.map((s) => s.replace(/[^\x21-\x7e]/g, "")),
            fc.constantFrom("", "=", "==", "a", "a===", "!!", "%%", "e30", "W10", "bnVsbA"),
          ),
        )
        .map(([p, i, seg]) => p.map((x, j) => (j === i ? seg : x)).join(".")),
    },
    { weight: 1, arbitrary: fc.tuple(real, fc.nat()).map(([t, n]) => t.slice(0, n % t.length)) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom("e30", "", "a", "x.y", "W10"), { minLength: 1, maxLength: 6 }).map((s) => s.join(".")) },
    { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 60_000 }).map((n) => `${b64("{}")}.${"e".repeat(n)}.x`) },
    { weight: 1, arbitrary: headerValue },
  );
}

/** Where a request carries its token(s), ESP's and ESPv2's places, possibly several at once. */
function tokenPlacement(token: fc.Arbitrary<string>): fc.Arbitrary<{ headers: HeaderEntries; query: Array<[string, string]> }> {
  const place = fc.tuple(fc.constantFrom("bearer", "raw", "iap", "query", "bearer-lower", "bearer-embedded"), token).map(([where, t]) => {
    const value = t.replace(/[^\x20-\x7e]/g, "");
    switch (where) {
      case "bearer":
        return { headers: [["Authorization", `Bearer ${value}`]] as HeaderEntries, query: [] as Array<[string, string]> };
      case "raw":
        return { headers: [["Authorization", value]] as HeaderEntries, query: [] };
      case "bearer-lower":
        return { headers: [["Authorization", `bearer ${value}`]] as HeaderEntries, query: [] };
      case "bearer-embedded":
        return { headers: [["Authorization", `Basic x, Bearer ${value}`]] as HeaderEntries, query: [] };
      case "iap":
        return { headers: [["X-Goog-Iap-Jwt-Assertion", value]] as HeaderEntries, query: [] };
      default:
        return { headers: [] as HeaderEntries, query: [["access_token", t]] as Array<[string, string]> };
    }
  });
  return fc.array(place, { minLength: 0, maxLength: 3 }).map((all) => ({ headers: all.flatMap((p) => p.headers), query: all.flatMap((p) => p.query) }));
}

// ---- echo bodies -----------------------------------------------------------------------------

const echoHeaders = headerEntries(
  {
    "Content-Type": contentType,
    "Accept-Encoding": acceptEncoding,
    "If-None-Match": weirdString.map((s) => s.replace(/[^\x20-\x7e]/g, "")),
    "x-api-key": fc.constantFrom("test-api-key", "", "nope"),
  },
  2,
);

const apiKeyQuery: fc.Arbitrary<Array<[string, string]>> = fc.oneof(
  { weight: 4, arbitrary: fc.constant([["key", "test-api-key"]] as Array<[string, string]>) },
  { weight: 1, arbitrary: fc.constant([["api_key", "test-api-key"]] as Array<[string, string]>) },
  { weight: 1, arbitrary: fc.constant([] as Array<[string, string]>) },
  { weight: 2, arbitrary: fc.array(fc.tuple(fc.constantFrom("key", "api_key", "access_token", "x"), fc.oneof(fc.constant("test-api-key"), weirdString)), { maxLength: 3 }) },
);

type Body = { body: string | Uint8Array | undefined; headers: HeaderEntries };

const echoBody: fc.Arbitrary<Body> = fc.oneof(
  // JSON near `{"message": …}`, as application/json (the backend parses it) or something else.
  {
    weight: 6,
    arbitrary: fc
      .tuple(jsonBody({ message: "hi" }), fc.oneof({ weight: 3, arbitrary: fc.constant("application/json") }, { weight: 1, arbitrary: contentType }))
      .map(([body, type]) => ({ body, headers: [["Content-Type", type]] as HeaderEntries })),
  },
  // Messages of every JSON type.
  { weight: 2, arbitrary: weirdValue.map((message) => ({ body: toJsonText({ message }), headers: [["Content-Type", "application/json"]] as HeaderEntries })) },
  // Compressed bodies, declared or not, valid or not.
  {
    weight: 2,
    arbitrary: fc
      .tuple(jsonBody({ message: "hi" }), fc.constantFrom("gzip", "deflate", "br", "GZIP", "identity", "gzip, identity", "x"), fc.boolean())
      .map(([text, encoding, compress]) => ({
        body: compress ? new Uint8Array(gzipSync(text)) : text,
        headers: [
          ["Content-Type", "application/json"],
          ["Content-Encoding", encoding],
        ] as HeaderEntries,
      })),
  },
  // Charsets: the bytes of another encoding under a charset label.
  {
    weight: 1,
    arbitrary: fc.tuple(weirdString, fc.constantFrom("utf-8", "utf-16", "utf-16le", "utf-16be", "utf-32", "latin1", "utf-7", "UTF-8", "utf8")).map(([message, charset]) => ({
      body: new Uint8Array(Buffer.from(toJsonText({ message }), charset === "latin1" ? "latin1" : charset.startsWith("utf-16") ? "utf16le" : "utf8")),
      headers: [["Content-Type", `application/json; charset=${charset}`]] as HeaderEntries,
    })),
  },
  // Around the backend's 100 kB limit, with a true or a false Content-Length.
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 100 * 1024 - 20, max: 100 * 1024 + 20 }), fc.constantFrom(undefined, "0", "1", "-1", "abc", "999999999", "102400"))
      .map(([size, length]) => ({
        body: `{"message":"${"m".repeat(Math.max(0, size - 14))}"}`,
        headers: [["Content-Type", "application/json"], ...(length === undefined ? [] : [["Content-Length", length]])] as HeaderEntries,
      })),
  },
  { weight: 1, arbitrary: fc.constant({ body: undefined, headers: [["Content-Type", "application/json"]] as HeaderEntries }) },
  { weight: 1, arbitrary: longString(1_000, 90_000).map((message) => ({ body: toJsonText({ message }), headers: [["Content-Type", "application/json"]] as HeaderEntries })) },
);

const echoRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({ method: fc.oneof({ weight: 8, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: method }), query: apiKeyQuery, body: echoBody, headers: echoHeaders })
  .map(({ method, query, body, headers }) => ({
    method,
    path: `/echo${queryString(query)}`,
    headers: [...body.headers, ...headers],
    ...(body.body === undefined ? {} : { body: body.body }),
  }));

function authRequest(tokens: fc.Arbitrary<string>): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      method: fc.oneof({ weight: 8, arbitrary: fc.constant("GET") }, { weight: 1, arbitrary: method }),
      path: fc.constantFrom(...AUTH_PATHS),
      placed: tokenPlacement(tokens),
      extra: fc.oneof(
        { weight: 3, arbitrary: fc.constant([] as HeaderEntries) },
        { weight: 1, arbitrary: echoHeaders },
        {
          weight: 1,
          arbitrary: repeatedHeader(
            "Authorization",
            tokens.map((t) => `Bearer ${t.replace(/[^\x20-\x7e]/g, "")}`),
          ),
        },
      ),
    })
    .map(({ method, path, placed, extra }) => ({ method, path: `${path}${queryString(placed.query)}`, headers: [...placed.headers, ...extra] }));
}

const otherRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method,
    path: fc.oneof(
      fc.constantFrom("/", "/echo/", "/ECHO", "/auth/info", "/auth/info/", "/auth/info/nope", "/echo%2F", "/auth%2Finfo%2Fproviderjwt", "/./echo", "/x/../echo", "/v1/echo"),
      fc.array(pathSegment, { minLength: 1, maxLength: 3 }).map((s) => `/${s.join("/")}`),
    ),
    headers: echoHeaders,
  })
  .map(({ method, path, headers }) => ({ method, path, headers }));

// ---- the properties ------------------------------------------------------------------------------

describe.each([
  ["esp", {}],
  ["espv2", { echo: { proxy: "espv2" } }],
] as const)("echo (%s): bad input (fuzz)", (dialect, fixture) => {
  let h: Harness;
  let minted: Minted[];

  beforeAll(async () => {
    h = await Harness.create({ fixture });
    minted = [];
    for (const scheme of SCHEMES) {
      for (const body of [
        { scheme },
        { scheme, expiresIn: "-1h" },
        { scheme, claims: { aud: ["a", "echo.standin.test", "https://echo.standin.test"], email: "é@x" } },
        { scheme, unsigned: true },
      ]) {
        const token = await mint(h, body);
        if (token) minted.push({ scheme, token });
      }
    }
  });

  it(
    `echo bodies: malformed, wrongly typed, odd charsets and encodings, around the 100 kB limit (${dialect})`,
    () =>
      fuzz(
        fc.asyncProperty(echoRequest, async (req) => {
          await h.reset();
          await h.send("echo", req, ESP);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    `auth-info with garbage, tampered and re-encoded tokens in every place (${dialect})`,
    () =>
      fuzz(
        fc.asyncProperty(authRequest(tokenArbitrary(minted)), async (req) => {
          await h.reset();
          await h.send("echo", req, ESP);
        }),
        2,
      ),
    timeoutFor(2),
  );

  it(
    `auth-info with validly signed tokens whose claims are odd (${dialect})`,
    () =>
      fuzz(
        fc.asyncProperty(
          fc.constantFrom(...SCHEMES),
          fc.dictionary(fc.oneof(fc.constantFrom("aud", "iss", "sub", "email", "exp", "nbf", "iat", "jti", "azp"), weirdString), weirdValue, { maxKeys: 4 }),
          fc.constantFrom(...AUTH_PATHS),
          async (scheme, claims, path) => {
            await h.reset();
            const token = await mint(h, { scheme, claims: { aud: "echo.standin.test", ...claims } });
            if (token === undefined) return;
            await h.send("echo", { method: "GET", path, headers: [["Authorization", `Bearer ${token}`]] }, ESP);
          },
        ),
        1,
      ),
    timeoutFor(1),
  );

  it(
    `other paths and methods (${dialect})`,
    () =>
      fuzz(
        fc.asyncProperty(otherRequest, async (req) => {
          await h.reset();
          await h.send("echo", req, ESP);
        }),
        0.5,
      ),
    timeoutFor(0.5),
  );

  it(
    `huge bodies, up to and past the 16 MiB limit (${dialect})`,
    () =>
      fuzz(
        fc.asyncProperty(fc.constantFrom(1 << 20, 16 << 20, (16 << 20) + 1, 17 << 20), fc.boolean(), async (size, declared) => {
          await h.reset();
          const body = `{"message":"${"m".repeat(size - 14)}"}`;
          const headers: HeaderEntries = [["Content-Type", "application/json"], ...(declared ? ([["Content-Length", String(size)]] as HeaderEntries) : [])];
          await h.send("echo", { method: "POST", path: "/echo?key=test-api-key", headers, body }, ESP);
        }),
        0.05,
      ),
    60_000,
  );
});

// ---- regressions: inputs the fuzz properties found, as shrunk, one test per fix -------------------

describe("echo: regressions found by fuzzing", () => {
  const nested = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
  const echo = async (emu: Standin, body: string) => {
    const res = await emu.echo.request("/echo?key=test-api-key", { method: "POST", body, headers: { "Content-Type": "application/json" } });
    return { status: res.status, type: res.headers.get("Content-Type"), poweredBy: res.headers.get("X-Powered-By"), text: await res.text() };
  };

  it("a message nested deeper than JSON.stringify can go gets express's 500 page, as on the sample (it was standin's own 500)", async () => {
    // Shrunk: POST /echo?key=test-api-key {"message":[[[…]]]} (a few thousand levels) answered `internal error: Maximum call stack size exceeded`.
    for (const proxy of ["esp", "espv2"] as const) {
      const emu = await createStandin({ fixture: { echo: { proxy } } });
      const res = await echo(emu, `{"message":${nested(20_000)}}`);
      expect(res).toEqual({
        status: 500,
        type: "text/html; charset=utf-8",
        poweredBy: "Express",
        text: '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Error</title>\n</head>\n<body>\n<pre>Internal Server Error</pre>\n</body>\n</html>\n',
      });
      // Shallower nesting echoes as before.
      const shallow = await echo(emu, `{"message":${nested(500)}}`);
      expect(shallow.status).toBe(200);
      expect(shallow.text).toBe(`{"message":${nested(500)}}`);
    }
  });
});
