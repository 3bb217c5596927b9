/**
 * Bad-input fuzzing of the echo service: the regression tests for what the
 * fuzzing found, each with its shrunk input.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

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
