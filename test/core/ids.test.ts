import { it } from "vitest";
import { Ids } from "../../src/core/ids.js";
import { encodeJSON, canonicalJSON } from "../../src/core/json.js";
import { parseInstant, formatInstant } from "../../src/core/instant.js";
it("scratch", () => {
  const ids = new Ids(1);
  console.log("uuid1", ids.uuid(), ids.nanoid(), ids.int(1000));
  const i2 = new Ids(2); console.log("uuid2", i2.uuid());
  try { console.log("toJSON", encodeJSON({ a: { toJSON: () => undefined }, b: 1 }, { sortKeys: true })); } catch (e) { console.log("err", e); }
  try { console.log("toJSON canon", canonicalJSON({ a: { toJSON: () => undefined }, b: 1 })); } catch (e) { console.log("err", e); }
  console.log("native", JSON.stringify({ a: { toJSON: () => undefined }, b: 1 }));
  console.log("year1", parseInstant("0001-01-01T00:00:00Z"), formatInstant(parseInstant("0001-01-01T00:00:00Z")));
  console.log("off", parseInstant("2026-01-01T00:00:00+02:99"));
});
