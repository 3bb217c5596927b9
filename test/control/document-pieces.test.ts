/**
 * The pieces a parsed document travels in (src/control/document-pieces.ts),
 * without a thread: each piece goes through structured clone as postMessage
 * sends it, and the pieces put back together give what JSON.parse gives.
 * Small budgets make every kind of cut happen on small documents: members
 * at a piece's edge, containers and strings opened inside others, keys
 * longer than a piece.
 */
import { deserialize, serialize } from "node:v8";
import { describe, expect, it } from "vitest";
import { DocumentAssembler, documentPieces, type Piece, type PieceBudget } from "../../src/control/document-pieces.js";

function count(value: unknown): number {
  if (value === null || typeof value !== "object") return 1;
  return 1 + (Array.isArray(value) ? value : Object.values(value)).reduce<number>((sum, member) => sum + count(member), 0);
}

/** The document text a piece carries (members with their commas and keys), its values, and its members that cannot be cut (not arrays, objects or strings). */
function pieceSize(piece: Piece): { chars: number; values: number; members: number; uncuttable: number } {
  const size = { chars: 0, values: 0, members: 0, uncuttable: 0 };
  const add = (text: number, value: unknown) => {
    size.chars += text;
    size.values += count(value);
    size.members++;
    if (value === null || (typeof value !== "object" && typeof value !== "string")) size.uncuttable++;
  };
  for (const op of piece) {
    if (op.op === "items") for (const item of op.items) add(JSON.stringify(item).length + 1, item);
    if (op.op === "entries") for (const [i, key] of op.keys.entries()) add(JSON.stringify(key).length + 1 + JSON.stringify(op.values[i]).length + 1, op.values[i]);
    if (op.op === "text") add(op.text.length, op.text);
    if (op.op === "value") add(JSON.stringify(op.value).length, op.value);
  }
  return size;
}

/** The document sent through `budget`'s pieces, each cloned as postMessage clones it; and the pieces' sizes. */
function roundTrip(text: string, budget: PieceBudget): { value: unknown; sizes: Array<ReturnType<typeof pieceSize>> } {
  const assembler = new DocumentAssembler();
  const sizes: Array<ReturnType<typeof pieceSize>> = [];
  for (const piece of documentPieces(JSON.parse(text), budget)) {
    const received = deserialize(serialize(piece)) as Piece;
    sizes.push(pieceSize(received));
    expect(assembler.done).toBe(false);
    assembler.add(received);
  }
  expect(assembler.done).toBe(true);
  return { value: assembler.value, sizes };
}

const DOCUMENTS = [
  '{"a":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20],"b":{"c":{"d":[[],[[]],{}]},"e":"a string of some length to split"}}',
  '[{"x":1},{"x":2},{"x":3},{"x":4},{"x":5},{"x":6},{"x":7},{"x":8}]',
  '{"10":"ten","b":1,"2":"two","a":{"z":1,"1":0,"y":2},"__proto__":{"p":true},"list":[{"__proto__":[1]},{"__proto__":null}]}',
  '{"n":[-0,1e400,-1e400,1e-400,12345678901234567890123,0.1,-5e-324,9007199254740993,1E2,-0.0]}',
  '{"escapes":"quote \\" backslash \\\\ newline \\n tab \\t nul \\u0000 lone \\ud800 pair 🎉 line sep \\u2028","unicode":"é中🔑é中🔑é中🔑é中🔑é中🔑"}',
  `{"${"k".repeat(80)}":1,"${"l".repeat(80)}":[1,2,3],"${"m".repeat(80)}":{"x":"${"y".repeat(80)}"}}`,
  `[${Array.from({ length: 200 }, (_, i) => `{"id":${i},"name":"n${i}","tags":["t${i % 3}"]}`).join(",")}]`,
  '"just one string, longer than a small piece, without anything around it"',
  "12345",
  "[]",
];

const BUDGETS: PieceBudget[] = [
  { chars: 8, values: 2 },
  { chars: 20, values: 4 },
  { chars: 64, values: 16 },
  { chars: 1_000, values: 1_000 },
];

describe("a document cut into pieces and put back together", () => {
  for (const budget of BUDGETS) {
    it(`gives what JSON.parse gives, every piece within ${budget.chars} characters and ${budget.values} values but for uncuttable members`, () => {
      for (const text of DOCUMENTS) {
        const reference = JSON.parse(text) as unknown;
        const { value, sizes } = roundTrip(text, budget);
        expect(value, text).toEqual(reference);
        expect(JSON.stringify(value), text).toBe(JSON.stringify(reference));
        // Over the budget only where a piece is one member that cannot be cut (a number or a literal, with its key),
        // which a budget of a mebibyte never meets: each such member travels in a piece of its own.
        const over = sizes.filter((s) => s.chars > budget.chars || s.values > budget.values);
        expect(
          over.filter((s) => s.members !== 1 || s.uncuttable !== 1),
          text,
        ).toEqual([]);
      }
    });
  }

  it("a document within the budget is one piece, the value whole", () => {
    const pieces = [...documentPieces({ a: [1, 2] }, { chars: 100, values: 100 })];
    expect(pieces).toEqual([[{ op: "value", value: { a: [1, 2] } }]]);
  });

  it("keeps own __proto__ keys, integer-like keys first, and -0", () => {
    const text = DOCUMENTS[2]!;
    const { value } = roundTrip(text, { chars: 8, values: 2 });
    const object = value as Record<string, unknown> & { list: Array<Record<string, unknown>> };
    expect(Object.keys(object)).toEqual(["2", "10", "b", "a", "__proto__", "list"]);
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Object.hasOwn(object, "__proto__")).toBe(true);
    expect(Object.hasOwn(object.list[1]!, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(object.list[1], "__proto__")?.value).toBeNull();
    const { value: numbers } = roundTrip(DOCUMENTS[3]!, { chars: 8, values: 2 });
    expect(Object.is((numbers as { n: number[] }).n[0], -0)).toBe(true);
    expect(Object.is((numbers as { n: number[] }).n[9], -0)).toBe(true);
  });

  it("refuses pieces out of order instead of building a wrong value", () => {
    const assembler = new DocumentAssembler();
    expect(() => assembler.add([{ op: "items", items: [1] }])).toThrow("a document piece adds to an open array where there is none");
    expect(() => assembler.add([{ op: "close" }])).toThrow("a document piece closes more than it opened");
    expect(() => assembler.value).toThrow("the document is not complete");
  });
});
