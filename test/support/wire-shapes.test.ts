/**
 * The wire-shape comparison the conformance oracle runs
 * (test/conformance/support/wire-shapes.ts), on hand-made schemas: it must
 * find a left-out key, accept a left-out omitempty key and null values, walk
 * into slices, maps and nested structs, and report keys beyond the struct.
 */
import { describe, expect, it } from "vitest";
import { checkShape, type OracleSchema, type ShapeFindings } from "../conformance/support/wire-shapes.js";

const schema: OracleSchema = {
  roots: ["p.Job"],
  types: {
    "p.Job": [
      { key: "ID", omit: false, type: "scalar" },
      { key: "Meta", omit: true, type: "map:scalar" },
      { key: "Groups", omit: false, type: "slice:struct:p.Group" },
      { key: "Tasks", omit: false, type: "map:struct:p.Group" },
    ],
    "p.Group": [
      { key: "Name", omit: false, type: "scalar" },
      { key: "Count", omit: false, type: "scalar" },
    ],
  },
};

function check(value: unknown, type = "struct:p.Job"): ShapeFindings {
  const findings: ShapeFindings = { missing: new Set(), extra: new Set() };
  checkShape(schema, value, type, findings);
  return findings;
}

describe("checkShape", () => {
  it("finds a key the encoder always writes and the answer leaves out, but not an omitempty one", () => {
    const f = check({ Groups: null, Tasks: null });
    expect([...f.missing]).toEqual(["p.Job.ID"]);
  });

  it("walks into slices and maps of structs", () => {
    const f = check({ ID: "a", Groups: [{ Name: "g", Count: 1 }, { Name: "h" }], Tasks: { t: { Count: 1 } } });
    expect([...f.missing].sort()).toEqual(["p.Group.Count", "p.Group.Name"]);
  });

  it("reports keys beyond the struct, and accepts null anywhere", () => {
    const f = check({ ID: "a", Groups: [null], Tasks: null, Extra: 1 });
    expect([...f.missing]).toEqual([]);
    expect([...f.extra]).toEqual(["p.Job.Extra"]);
  });

  it("checks a list answer element by element", () => {
    const f = check(
      [
        { ID: "a", Groups: null, Tasks: null },
        { Groups: null, Tasks: null },
      ],
      "slice:struct:p.Job",
    );
    expect([...f.missing]).toEqual(["p.Job.ID"]);
  });

  it("refuses a struct the oracle did not print", () => {
    expect(() => check({}, "struct:p.Missing")).toThrow(/no struct p.Missing/);
  });
});
