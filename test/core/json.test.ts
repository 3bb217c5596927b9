import fc from "fast-check";
import { describe, it, expect } from "vitest";
import { canonicalJSON, canonicalJSONChunks, canonicalJSONChunksInTurns, compareBytewise, encodeJSON, excessiveNesting, sortKeysDeep } from "../../src/core/json.js";

const plainValues: Array<[string, unknown]> = [
  ["object", { b: 1, a: "x", c: [1, 2, { d: null }] }],
  ["empty containers inside", { o: {}, l: [], nested: { o: {}, l: [[], {}] } }],
  ["array", [1, "two", true, null, { x: [] }]],
  ["string", "hello"],
  ["number", 42.5],
  ["null", null],
  ["empty object", {}],
  ["empty array", []],
  ["unicode", { é: "ü", emoji: "\u{1F600}" }],
];

describe("encodeJSON: layout", () => {
  it.each(plainValues)("compact %s equals JSON.stringify, with no trailing newline", (_label, value) => {
    const text = encodeJSON(value);
    expect(text).toBe(JSON.stringify(value));
    expect(text.endsWith("\n")).toBe(false);
  });

  it.each(plainValues)("pretty %s is a 4-space indent plus exactly one trailing newline", (_label, value) => {
    expect(encodeJSON(value, { pretty: true })).toBe(JSON.stringify(value, null, 4) + "\n");
  });

  it.each(plainValues)("pretty + sortKeys %s matches JSON.stringify of the key-sorted value", (_label, value) => {
    expect(encodeJSON(value, { pretty: true, sortKeys: true })).toBe(JSON.stringify(sortKeysDeep(value), null, 4) + "\n");
  });

  it("spells out the pretty layout", () => {
    expect(encodeJSON({ a: [1, {}], b: [] }, { pretty: true })).toBe('{\n    "a": [\n        1,\n        {}\n    ],\n    "b": []\n}\n');
    expect(encodeJSON({ a: [1, {}], b: [] }, { pretty: true, sortKeys: true })).toBe('{\n    "a": [\n        1,\n        {}\n    ],\n    "b": []\n}\n');
  });

  it("encodes undefined at the top level as null", () => {
    expect(encodeJSON(undefined)).toBe("null");
    expect(encodeJSON(undefined, { sortKeys: true })).toBe("null");
  });
});

describe("encodeJSON: sortKeys", () => {
  it("sorts keys byte-wise, recursively, keeping array order", () => {
    const value = {
      ID: 1,
      IsMultiregion: 2,
      EvalID: 3,
      EvalCreateIndex: 4,
      a: { z: 1, Y: 2, x: [{ b: 1, a: 2 }, 3] },
      B: 5,
    };
    const text = encodeJSON(value, { sortKeys: true });
    expect(text).toBe('{"B":5,"EvalCreateIndex":4,"EvalID":3,"ID":1,"IsMultiregion":2,"a":{"Y":2,"x":[{"a":2,"b":1},3],"z":1}}');
    expect(Object.keys(JSON.parse(text))).toEqual(["B", "EvalCreateIndex", "EvalID", "ID", "IsMultiregion", "a"]);
  });

  it("sorts integer-like keys as strings, not numerically", () => {
    // JS puts integer keys first in ascending numeric order; Go sorts map keys as strings.
    expect(encodeJSON({ b: 0, "9": 1, "10": 2, a: 3 }, { sortKeys: true })).toBe('{"10":2,"9":1,"a":3,"b":0}');
  });

  it("leaves insertion order alone without sortKeys", () => {
    expect(encodeJSON({ b: 1, a: 2 })).toBe('{"b":1,"a":2}');
  });

  it("sortKeysDeep returns a sorted copy and leaves the input alone", () => {
    const input = { b: { d: 1, c: 2 }, a: [{ f: 1, e: 2 }] };
    const sorted = sortKeysDeep(input);
    expect(Object.keys(sorted)).toEqual(["a", "b"]);
    expect(Object.keys(sorted.b)).toEqual(["c", "d"]);
    expect(Object.keys(sorted.a[0]!)).toEqual(["e", "f"]);
    expect(Object.keys(input)).toEqual(["b", "a"]);
    expect(sorted).toEqual(input);
  });
});

describe("encodeJSON: remembered key orders", () => {
  it("objects with the same keys, in any insertion order and however often, encode in byte order", () => {
    const keyList = fc.uniqueArray(fc.oneof(fc.string(), fc.constantFrom("a", "B", "\u{1F600}", "\uFFFD", "_", "ä")), { maxLength: 8 });
    fc.assert(
      fc.property(keyList, fc.integer({ min: 1, max: 4 }), (keys, repeats) => {
        const expected =
          "{" +
          [...keys]
            .sort(compareBytewise)
            .map((k) => `${JSON.stringify(k)}:1`)
            .join(",") +
          "}";
        for (let i = 0; i < repeats; i++) {
          const shuffled = i % 2 === 0 ? keys : [...keys].reverse();
          const doc = Object.fromEntries(shuffled.map((k) => [k, 1]));
          // Integer-like keys come first in JS objects whatever the insertion order; compare with the same object's own keys.
          const own =
            "{" +
            Object.keys(doc)
              .sort(compareBytewise)
              .map((k) => `${JSON.stringify(k)}:1`)
              .join(",") +
            "}";
          expect(encodeJSON(doc, { sortKeys: true, escapeHTML: false })).toBe(own);
          if (!keys.some((k) => /^\d+$/.test(k))) expect(own).toBe(expected);
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe("compareBytewise", () => {
  it("orders by UTF-8 bytes: U+FFFD sorts before U+1F600 although its UTF-16 unit is larger", () => {
    const bmp = "\uFFFD";
    const astral = "\u{1F600}"; // "\uD83D\uDE00"
    expect(bmp > astral).toBe(true); // UTF-16 order gets it the other way round
    expect(compareBytewise(bmp, astral)).toBeLessThan(0);
    expect(compareBytewise(astral, bmp)).toBeGreaterThan(0);
    expect(Buffer.compare(Buffer.from(bmp), Buffer.from(astral))).toBe(-1);
  });

  it.each<[string, string]>([
    ["B", "a"],
    ["ID", "IsMultiregion"],
    ["EvalCreateIndex", "EvalID"],
    ["a", "ab"],
    ["", "a"],
    ["\u007f", "\u0080"],
    ["\u00ff", "\u0100"],
    ["\uD7FF", "\uE000"],
    ["\uE000", "\u{10000}"],
    ["\u{10000}", "\u{10FFFF}"],
    ["x\uFFFF", "x\u{1F600}"],
  ])("%j sorts before %j, agreeing with Buffer.compare of the UTF-8 bytes", (a, b) => {
    expect(compareBytewise(a, b)).toBeLessThan(0);
    expect(compareBytewise(b, a)).toBeGreaterThan(0);
    expect(Buffer.compare(Buffer.from(a), Buffer.from(b))).toBe(-1);
  });

  it("is 0 for equal strings", () => {
    expect(compareBytewise("\u{1F600}x", "\u{1F600}x")).toBe(0);
  });

  it("sorts object keys with astral characters after BMP ones", () => {
    expect(encodeJSON({ "\u{1F600}": 1, "\uFFFD": 2, a: 3 }, { sortKeys: true })).toBe('{"a":3,"\uFFFD":2,"\u{1F600}":1}');
  });
});

describe("encodeJSON: bigint", () => {
  it("prints bigint values exactly", () => {
    expect(encodeJSON(1767225600123456789n)).toBe("1767225600123456789");
    expect(encodeJSON({ SubmitTime: 1767225600123456789n, n: 1 })).toBe('{"SubmitTime":1767225600123456789,"n":1}');
    expect(encodeJSON({ a: [{ t: -9223372036854775808n }] })).toBe('{"a":[{"t":-9223372036854775808}]}');
  });

  it("prints nested bigint values exactly in pretty mode with the same layout as JSON.stringify", () => {
    const text = encodeJSON({ job: { ModifyTime: 1767225600123456789n, Tags: [] }, list: [1n, {}] }, { pretty: true });
    expect(text).toBe('{\n    "job": {\n        "ModifyTime": 1767225600123456789,\n        "Tags": []\n    },\n    "list": [\n        1,\n        {}\n    ]\n}\n');
  });

  it("canonicalJSON prints bigint exactly too", () => {
    expect(canonicalJSON({ b: 2n ** 64n, a: 1 })).toBe('{"a":1,"b":18446744073709551616}');
  });
});

describe("encodeJSON: escapeHTML", () => {
  const value = { html: '<a href="x">&</a>', seps: "line\u2028para\u2029", "<key>": 1 };

  it("escapes < > & U+2028 U+2029 as \\u escapes", () => {
    const text = encodeJSON(value, { escapeHTML: true });
    expect(text).toBe('{"html":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e","seps":"line\\u2028para\\u2029","\\u003ckey\\u003e":1}');
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });

  it("escapes in the sorted, pretty and bigint paths too", () => {
    const text = encodeJSON({ ...value, big: 1n }, { escapeHTML: true, sortKeys: true, pretty: true });
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text).toContain("\\u003ckey\\u003e");
    expect(text.endsWith("}\n")).toBe(true);
  });

  it("leaves them raw without the option", () => {
    const text = encodeJSON(value);
    expect(text).toContain("<a href");
    expect(text).toContain("&");
    expect(text).toContain("\u2028");
    expect(text).toContain("\u2029");
    expect(text).not.toContain("\\u003c");
  });
});

describe("encodeJSON: JSON.stringify compatibility", () => {
  const awkward = {
    gone: undefined,
    fn: () => 1,
    sym: Symbol("s"),
    list: [undefined, () => 1, Symbol("t"), Number.NaN, Number.POSITIVE_INFINITY, -0],
    nan: Number.NaN,
    inf: Number.NEGATIVE_INFINITY,
    date: new Date(Date.UTC(2026, 0, 1)),
    onlyUndefined: { x: undefined },
    kept: "yes",
  };

  it("drops undefined properties, turns undefined/functions in arrays and NaN/Infinity into null", () => {
    const expected = '{"list":[null,null,null,null,null,0],"nan":null,"inf":null,"date":"2026-01-01T00:00:00.000Z","onlyUndefined":{},"kept":"yes"}';
    expect(JSON.stringify(awkward)).toBe(expected);
    expect(encodeJSON(awkward)).toBe(expected);
  });

  it("does the same through the custom serializer (sortKeys, bigint)", () => {
    const sorted = encodeJSON(awkward, { sortKeys: true });
    expect(sorted).toBe(JSON.stringify(sortKeysDeep(JSON.parse(JSON.stringify(awkward)))));
    const withBig = encodeJSON({ ...awkward, big: 3n });
    expect(withBig).toBe(JSON.stringify(awkward).replace(/}$/, ',"big":3}'));
  });

  it("honours toJSON in the custom serializer", () => {
    expect(encodeJSON({ d: new Date(0), n: 1n }, { sortKeys: true })).toBe('{"d":"1970-01-01T00:00:00.000Z","n":1}');
  });

  // Regression (was a bug, now fixed): serialize() (the sortKeys/bigint/canonical path) checks for
  // undefined/function/symbol values *before* resolving toJSON. When a
  // property's toJSON() returns undefined, the key and ":" are already written
  // and nothing follows, giving invalid JSON ({"a":,"b":1}). JSON.stringify
  // drops such a property ({"b":1}).
  it("drops a property whose toJSON() returns undefined, like JSON.stringify", () => {
    const value = { a: { toJSON: () => undefined }, b: 1 };
    expect(JSON.stringify(value)).toBe('{"b":1}');
    expect(encodeJSON(value, { sortKeys: true })).toBe('{"b":1}');
  });
});

describe("canonicalJSON", () => {
  it("is independent of insertion order, at every depth", () => {
    const one = { a: 1, b: { c: [1, { e: 1, d: 2 }], f: "x" }, g: null };
    const two = { g: null, b: { f: "x", c: [1, { d: 2, e: 1 }] }, a: 1 };
    expect(canonicalJSON(one)).toBe(canonicalJSON(two));
    expect(canonicalJSON(one)).toBe('{"a":1,"b":{"c":[1,{"d":2,"e":1}],"f":"x"},"g":null}');
  });

  it("distinguishes different values and array orders", () => {
    expect(canonicalJSON({ a: 1 })).not.toBe(canonicalJSON({ a: 2 }));
    expect(canonicalJSON([1, 2])).not.toBe(canonicalJSON([2, 1]));
  });

  it("is compact", () => {
    expect(canonicalJSON({ a: [1, { b: 2 }] })).not.toMatch(/\s/);
  });
});

describe("canonicalJSON: the dedicated writer and its chunked form", () => {
  const chunked = (value: unknown, options?: { streamDepth?: number; chunkChars?: number }) => {
    const chunks: string[] = [];
    canonicalJSONChunks(value, (chunk) => chunks.push(chunk), options);
    return chunks.join("");
  };
  const awkward: Array<[string, unknown]> = [
    ["undefined, functions and symbols dropped from objects, null in arrays", { a: undefined, b: () => 1, c: Symbol("s"), d: [undefined, () => 1, NaN, -0, Infinity], e: 1 }],
    ["toJSON at every depth, one giving undefined", { t: { toJSON: () => ({ z: 1, y: [2n] }) }, gone: { toJSON: () => undefined }, d: new Date(0) }],
    ["top-level toJSON and undefined", [{ toJSON: () => "x" }]],
    ["bigint", { big: 2n ** 70n, list: [1n, { n: -5n }] }],
    ["keys needing escapes and astral keys", { "\u{1F600}": 1, "\uFFFD": 2, 'q"uote': 3, "back\\slash": 4, "ctl\u0001": 5, "": 6 }],
    ["integer-like keys", { 10: "a", 9: "b", x: "c", "01": "d" }],
    ["a map with more keys than are remembered (sorted directly)", Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${(i * 7919) % 600}`, { i, [`v${i % 3}`]: i }]))],
    ["objects with the same first key and different keys, one after another", [{ a: 1, b: 2 }, { a: 1, c: 3 }, { a: 1, b: 2 }, { a: 1 }, { a: 1, c: 3, b: 2 }]],
    ["deep", { a: { b: { c: { d: { e: { f: { g: [[[{ h: 1, g: 2 }]]] } } } } } } }],
  ];
  it.each([...plainValues, ...awkward])("%s: canonicalJSON is encodeJSON with sortKeys, and the chunks join to it", (_name, value) => {
    const expected = encodeJSON(value, { sortKeys: true });
    expect(canonicalJSON(value)).toBe(expected);
    expect(canonicalJSON(value)).toBe(canonicalJSON(value)); // the remembered layouts give the same text again
    for (const streamDepth of [0, 1, 2, 3, 5, 50]) {
      for (const chunkChars of [1, 7, 1 << 16]) expect(chunked(value, { streamDepth, chunkChars })).toBe(expected);
    }
  });

  it.each([...plainValues, ...awkward])("%s: the chunks written in turns are the same chunks, with a turn after each slice", async (_name, value) => {
    for (const streamDepth of [0, 1, 3, 5]) {
      for (const chunkChars of [1, 7, 1 << 16]) {
        const chunks: string[] = [];
        canonicalJSONChunks(value, (chunk) => chunks.push(chunk), { streamDepth, chunkChars });
        const inTurns: string[] = [];
        let turns = 0;
        const turnChars = 5;
        await canonicalJSONChunksInTurns(
          value,
          (chunk) => inTurns.push(chunk),
          async () => void turns++,
          { streamDepth, chunkChars, turnChars },
        );
        expect(inTurns).toEqual(chunks);
        // A turn each time `turnChars` characters have been handed out since the last one.
        let expectedTurns = 0;
        let since = 0;
        for (const chunk of chunks) {
          since += chunk.length;
          if (since >= turnChars) {
            expectedTurns++;
            since = 0;
          }
        }
        expect(turns).toBe(expectedTurns);
      }
    }
  });

  it("for any JSON document, canonicalJSON is the sorted encoding and the chunks join to it", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 6 }), fc.integer({ min: 1, max: 64 }), (value, streamDepth, chunkChars) => {
        const expected = encodeJSON(value, { sortKeys: true });
        expect(canonicalJSON(value)).toBe(expected);
        expect(chunked(value, { streamDepth, chunkChars })).toBe(expected);
      }),
      { numRuns: 500, seed: 11 },
    );
  });
});

describe("excessiveNesting", () => {
  /** The plain character walk: the reference for the quote-to-quote scan. */
  function reference(text: string, limit: number): number {
    if (text.length <= limit) return -1;
    let depth = 0;
    let inString = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === "\\") i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "[" || c === "{") {
        if (++depth > limit) return i;
      } else if (c === "]" || c === "}") depth--;
    }
    return -1;
  }

  it("finds the bracket past the limit, ignoring brackets inside strings", () => {
    expect(excessiveNesting("[[[1]]]", 2)).toBe(2);
    expect(excessiveNesting("[[1]]", 2)).toBe(-1);
    expect(excessiveNesting('["[[[[", {"k": "{{{{"}]', 2)).toBe(-1);
    expect(excessiveNesting('["\\\\", [[1]]]', 2)).toBe(8); // an escaped backslash does not escape the quote after it
    expect(excessiveNesting('["\\" [[[", 1]', 2)).toBe(-1); // an escaped quote does not end the string
    expect(excessiveNesting('["unterminated [[[[', 2)).toBe(-1);
  });

  it("agrees with a character-by-character walk on any text", () => {
    const text = fc.array(fc.constantFrom('"', "\\", "[", "]", "{", "}", "a", " ", ","), { maxLength: 60 }).map((chars) => chars.join(""));
    fc.assert(
      fc.property(text, fc.integer({ min: 0, max: 5 }), (t, limit) => {
        expect(excessiveNesting(t, limit)).toBe(reference(t, limit));
      }),
      { numRuns: 3000, seed: 5 },
    );
    fc.assert(
      fc.property(fc.json(), fc.integer({ min: 0, max: 4 }), (t, limit) => {
        expect(excessiveNesting(t, limit)).toBe(reference(t, limit));
      }),
      { numRuns: 500, seed: 6 },
    );
  });
});
