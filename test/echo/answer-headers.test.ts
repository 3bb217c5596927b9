/**
 * The headers of the sample's answers as sent and as recorded: express's
 * three (in Headers order), `Vary: Accept-Encoding` exactly when the answer
 * is large enough to compress (whether or not the client accepts gzip), and
 * the tape recording what was sent.
 */
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

const echo = (emu: Standin, message: string, headers: Record<string, string> = {}) =>
  emu.echo.request("/echo?key=test-api-key", { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ message }) });

async function lastTapeResponse(emu: Standin): Promise<{ status: number; headers: Record<string, string> }> {
  const tape = await (await emu.echo.request("/_standin/tape")).json();
  return tape.entries.filter((e: { kind: string }) => e.kind === "request").at(-1).response;
}

describe("echo answer headers", () => {
  it("sends express's headers and no Vary on a small answer, with or without Accept-Encoding", async () => {
    const emu = await createStandin();
    for (const headers of [{}, { "accept-encoding": "gzip" }] as Record<string, string>[]) {
      const res = await echo(emu, "hi", headers);
      expect([...res.headers]).toEqual([
        ["content-type", "application/json; charset=utf-8"],
        ["etag", 'W/"10-uMVlbw9Z7nUmyqNghHaAPQ8hQ5M"'],
        ["x-powered-by", "Express"],
      ]);
      expect(await res.text()).toBe('{"message":"hi"}');
      expect((await lastTapeResponse(emu)).headers).toEqual({
        "content-type": "application/json; charset=utf-8",
        etag: 'W/"10-uMVlbw9Z7nUmyqNghHaAPQ8hQ5M"',
        "x-powered-by": "Express",
      });
    }
  });

  it("varies on the encoding once the answer reaches the threshold, and the tape records the Vary it sent", async () => {
    const emu = await createStandin();
    const message = "x".repeat(2000);
    const plain = await echo(emu, message);
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(JSON.parse(await plain.text())).toEqual({ message });
    expect((await lastTapeResponse(emu)).headers).toMatchObject({ vary: "Accept-Encoding", etag: 'W/"7de-10GbfSB4vwDzIKJecp/Pu2N5Xmg"' });
    const gzipped = await echo(emu, message, { "accept-encoding": "gzip" });
    expect([gzipped.headers.get("content-encoding"), gzipped.headers.get("vary"), gzipped.headers.get("etag")]).toEqual([
      "gzip",
      "Accept-Encoding",
      'W/"7de-10GbfSB4vwDzIKJecp/Pu2N5Xmg"',
    ]);
    expect(JSON.parse(gunzipSync(Buffer.from(await gzipped.arrayBuffer())).toString("utf8"))).toEqual({ message });
  });
});
