/**
 * core/go: the Go-compatibility pieces every service words its errors with.
 * Expected texts are what Go 1.22 prints (strconv.Quote is also `%q` and
 * `%#v` of a string).
 */
import { describe, expect, it } from "vitest";
import { goGlob } from "../../src/core/go/glob.js";
import { goParseInt, goQuote } from "../../src/core/go/strconv.js";
import { createStandin } from "../../src/emulator.js";

describe("strconv.Quote", () => {
  it.each([
    ["plain", '"plain"'],
    ['a "quoted" \\ path', '"a \\"quoted\\" \\\\ path"'],
    ["\x01", '"\\x01"'],
    ["\x07\b\f\n\r\t\v", '"\\a\\b\\f\\n\\r\\t\\v"'],
    ["\x7f", '"\\x7f"'],
    ["héllo ☃", '"héllo ☃"'],
    ["\u2028", '"\\u2028"'],
    ["\u00a0", '"\\u00a0"'],
    ["\ud800", '"\\ufffd"'],
    ["𝄞", '"𝄞"'],
  ])("%j → %s", (text, quoted) => {
    expect(goQuote(text)).toBe(quoted);
  });

  it("is what the ParseInt errors quote with", () => {
    expect(goParseInt("\x01")).toEqual({ ok: false, msg: 'strconv.ParseInt: parsing "\\x01": invalid syntax', syntax: true });
  });
});

describe("go-glob", () => {
  it.each([
    ["", "", true],
    ["", "a", false],
    ["*", "anything", true],
    ["dc1", "dc1", true],
    ["dc1", "dc10", false],
    ["dc*", "dc10", true],
    ["*-east", "us-east", true],
    ["*-east", "us-west", false],
    ["us-*-1", "us-east-1", true],
    ["a*b*c", "abc", true],
    ["a*b*c", "acb", false],
    ["ab*ba", "aba", false],
    ["dev-*", "prod", false],
    // Line breaks are characters like any other (a regular expression's `.` would not match them).
    ["dev-*", "dev-\nb", true],
    ["a.b", "axb", false],
    ["(x)*", "(x)y", true],
  ])("%j matches %j: %s", (pattern, subject, matches) => {
    expect(goGlob(pattern, subject)).toBe(matches);
  });
});

describe("Go's quoting in the scheduler's errors", () => {
  // These used JSON.stringify, which writes a control character as \u0001 where Go writes \x01.
  it("the event stream's bad index", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/v1/event/stream?index=%01");
    expect([res.status, await res.text()]).toEqual([400, 'Unable to parse index: strconv.Atoi: parsing "\\x01": invalid syntax']);
  });

  it("an ACL policy's rejected block", async () => {
    const emu = await createStandin({
      fixture: { scheduler: { acl: { enabled: true, tokens: [{ SecretID: "00000000-0000-4000-8000-000000000001", Name: "root", Type: "management" }] } } },
    });
    const res = await emu.scheduler.request("/v1/acl/policy/bad", {
      method: "POST",
      headers: { "X-Nomad-Token": "00000000-0000-4000-8000-000000000001" },
      body: JSON.stringify({ Name: "bad", Rules: 'node { policy = "a\\u0001b" }' }),
    });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('Invalid node policy: &acl.NodePolicy{Policy:"a\\x01b"}');
  });
});
