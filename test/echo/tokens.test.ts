import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { ECHO_SCHEMES } from "../../src/echo/schemes.js";

async function mint(emu: Awaited<ReturnType<typeof createStandin>>, body: unknown) {
  const res = await emu.echo.request("/_standin/echo/tokens", { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { token?: string; error?: string } };
}

async function jwks(emu: Awaited<ReturnType<typeof createStandin>>, scheme: string) {
  const res = await emu.echo.request(`/_standin/echo/jwks/${scheme}`);
  return { status: res.status, body: await res.json() };
}

describe("emulator-held echo keys", () => {
  it.each(ECHO_SCHEMES)("mints a %s token that verifies against the published key set, with iat/exp from the virtual clock", async (scheme) => {
    const emu = await createStandin();
    await emu.clock.advance("90s");
    const { status, body } = await mint(emu, { scheme, claims: { email: "a@b.test", custom: 7 }, expiresIn: "30m" });
    expect(status).toBe(200);
    const keys = await jwks(emu, scheme);
    expect(keys.status).toBe(200);
    const header = decodeProtectedHeader(body.token!);
    expect(header).toEqual({ alg: "RS256", kid: `standin-test-${scheme}-1`, typ: "JWT" });
    const start = Date.parse("2026-01-01T00:01:30Z") / 1000;
    const { payload } = await jwtVerify(body.token!, createLocalJWKSet(keys.body as never), { currentDate: new Date(start * 1000) });
    expect(payload.iat).toBe(start);
    expect(payload.exp).toBe(start + 1800);
    expect(payload.email).toBe("a@b.test");
    expect(payload.custom).toBe(7);
    expect(typeof payload.iss).toBe("string");
    expect(typeof payload.aud).toBe("string");
    // The published set holds only the public half.
    expect(JSON.stringify(keys.body)).not.toMatch(/"d":/);
  });

  it("mints byte-identical tokens for the same claims at the same virtual instant, on separate emulators", async () => {
    const a = await mint(await createStandin(), { scheme: "provider_jwt" });
    const b = await mint(await createStandin(), { scheme: "provider_jwt" });
    expect(a.body.token).toBe(b.body.token);
  });

  it("a token of one scheme does not verify with another scheme's key set", async () => {
    const emu = await createStandin();
    const { body } = await mint(emu, { scheme: "provider_jwt" });
    const other = await jwks(emu, "identity_platform");
    await expect(jwtVerify(body.token!, createLocalJWKSet(other.body as never))).rejects.toThrow();
  });

  it("defaults to a one-hour lifetime and the scheme's configured issuer and first audience", async () => {
    const emu = await createStandin({ fixture: { echo: { schemes: { identity_platform: { issuer: "https://securetoken.google.com/p1", audiences: ["p1", "p2"] } } } } });
    const { body } = await mint(emu, { scheme: "identity_platform" });
    const [, payloadPart] = body.token!.split(".");
    const payload = JSON.parse(Buffer.from(payloadPart!, "base64url").toString());
    expect(payload.iss).toBe("https://securetoken.google.com/p1");
    expect(payload.aud).toBe("p1");
    expect(payload.exp - payload.iat).toBe(3600);
  });

  it("rejects unknown schemes (404), bad bodies and bad durations (400), and schemes whose keys the fixture gave (409)", async () => {
    const emu = await createStandin({ fixture: { echo: { schemes: { provider_id_token: { jwks: { keys: [] } } } } } });
    expect((await mint(emu, { scheme: "nope" })).status).toBe(404);
    expect((await mint(emu, { scheme: "provider_jwt", expiresIn: "1 hour" })).status).toBe(400);
    expect((await mint(emu, { scheme: "provider_jwt", extra: 1 })).status).toBe(400);
    const given = await mint(emu, { scheme: "provider_id_token" });
    expect(given.status).toBe(409);
    expect(given.body.error).toMatch(/key set from the fixture/);
    expect((await jwks(emu, "provider_id_token")).body).toEqual({ keys: [] });
    expect((await jwks(emu, "nope")).status).toBe(404);
  });
});

describe("minting is bounded by the claims' size", () => {
  it("claims up to 64 KiB of JSON are signed; one byte more is a 400 naming the bound", async () => {
    const emu = await createStandin();
    // {"big":"…"} is 10 bytes around the string.
    const atLimit = await mint(emu, { scheme: "provider_jwt", claims: { big: "x".repeat(64 * 1024 - 10) } });
    expect(atLimit.status).toBe(200);
    const over = await mint(emu, { scheme: "provider_jwt", claims: { big: "x".repeat(64 * 1024 - 9) } });
    expect(over.status).toBe(400);
    expect(over.body.error).toBe("invalid body: claims: claims take at most 65536 bytes of JSON (a token is sent in a header)");
    // Counted in bytes, not characters.
    expect((await mint(emu, { scheme: "provider_jwt", claims: { big: "é".repeat(40_000) } })).status).toBe(400);
  });

  it("a 30 MB claims object is refused with 413 before it is parsed, stated length or not", async () => {
    const emu = await createStandin();
    // Built as one string, not by stringifying a million-key object: the body's size is the point, and the
    // stringify alone outlasted the test's timeout on a loaded machine.
    const body = `{"scheme":"provider_jwt","claims":{"big":"${"v".repeat(30_000_000)}"}}`;
    expect(body.length).toBeGreaterThan(30_000_000);
    const stated = await emu.echo.request("/_standin/echo/tokens", { method: "POST", body, headers: { "Content-Length": String(body.length) } });
    expect(stated.status).toBe(413);
    expect(await stated.json()).toEqual({ error: "request body too large: POST /_standin/echo/tokens takes at most 131072 bytes" });
    const streamed = await emu.echo.request("/_standin/echo/tokens", { method: "POST", body });
    expect(streamed.status).toBe(413);
  });
});
