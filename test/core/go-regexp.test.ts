/**
 * core/go/regexp's ReplaceAllString: cases from Go's regexp tests
 * (all_test.go, replaceTests, and the rules of Regexp.Expand), so `regex_replace` in job files answers what
 * Nomad's (Go's RE2) answers: empty matches next to a match, anchors after
 * the first match, `$1`/`${name}` expansion and malformed references.
 */
import { describe, expect, it } from "vitest";
import { compileGoRegexp, goReplaceAll } from "../../src/core/go/regexp.js";

function replaceAll(pattern: string, replacement: string, input: string, maxLength = 1_000_000): string | undefined {
  const compiled = compileGoRegexp(pattern);
  if (!compiled.re) throw new Error(compiled.error);
  return goReplaceAll(compiled.re, input, replacement, maxLength);
}

describe("Go's Regexp.ReplaceAllString", () => {
  it.each([
    ["", "", "", ""],
    ["", "x", "", "x"],
    ["", "", "abc", "abc"],
    ["", "x", "abc", "xaxbxcx"],
    ["b", "x", "abc", "axc"],
    ["y", "x", "abc", "abc"],
    ["[a-c]*", "x", "\u65e5", "x\u65e5x"],
    ["[^\u65e5]", "x", "abc\u65e5def", "xxx\u65e5xxx"],
    ["^[a-c]*", "x", "abcdabc", "xdabc"],
    ["[a-c]*$", "x", "abcdabc", "abcdx"],
    ["^[a-c]*$", "x", "abcdabc", "abcdabc"],
    ["^[a-c]*", "x", "", "x"],
    ["^[a-c]+", "x", "dabce", "dabce"],
    ["x", "xXx", "xxxXxxx", "xXxxXxxXxXxXxxXxxXx"],
    [".+", "x", "abc", "x"],
    ["[a-c]*", "x", "def", "xdxexfx"],
    ["[a-c]+", "x", "abcbcdcdedef", "xdxdedef"],
    ["[a-c]*", "x", "abcbcdcdedef", "xdxdxexdxexfx"],
    ["a+", "($0)", "banana", "b(a)n(a)n(a)"],
    ["a+", "(${0})$0", "banana", "b(a)an(a)an(a)a"],
    ["hello, (.+)", "goodbye, ${1}", "hello, world", "goodbye, world"],
    ["hello, (?P<noun>.+)", "goodbye, $noun!", "hello, world", "goodbye, world!"],
    ["hello, (?P<noun>.+)", "goodbye, ${noun}!", "hello, world", "goodbye, world!"],
    ["(?P<x>hi)|(?P<y>bye)", "$xyz", "hi", ""],
    ["(?P<x>hi)|(?P<y>bye)", "${x}yz", "hi", "hiyz"],
    ["(?P<x>hi)|(?P<y>bye)", "hello $$x", "hi", "hello $x"],
    ["a+", "${oops", "aaa", "${oops"],
    ["a+", "$$", "aaa", "$"],
    ["a+", "$", "aaa", "$"],
    ["(x)?", "$1", "123", "123"],
    ["abc", "$1", "123", "123"],
    ["(a)(b){0}(c)", ".$1|$3.", "xacxacx", "x.a|c.x.a|c.x"],
    ["(a)(b){0}(c)", ".$2|$3.", "xacxacx", "x.|c.x.|c.x"],
    ["((a(b){0}){3}){5}(h)", "y caramb$2", "say aaaaaaaaaaaaaaaah", "say ay caramba"],
  ])("%j with %j in %j → %j", (pattern, replacement, input, expected) => {
    expect(replaceAll(pattern, replacement, input)).toBe(expected);
  });

  it("is linear: ^(a+)+$ on 5,000 characters answers (a backtracking engine would not, in any time)", () => {
    expect(replaceAll("^(a+)+$", "b", `${"a".repeat(5_000)}!`)).toBe(`${"a".repeat(5_000)}!`);
    expect(replaceAll("^(a+)+$", "b", "a".repeat(5_000))).toBe("b");
  });

  it("stops as soon as the result outgrows the limit", () => {
    expect(replaceAll("", "0123456789", "a".repeat(200), 1_000)).toBeUndefined();
    expect(replaceAll("", "0123456789", "a".repeat(80), 1_000)).toHaveLength(890);
  });
});
