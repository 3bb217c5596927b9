/**
 * encoding/json's error texts (core/go/json-errors), as both products put
 * them in their 400s, and through each decoder that uses them.
 */
import { describe, expect, it } from "vitest";
import { jsonKind, maxDepthError, quoteChar, syntaxError, unmarshalTypeError } from "../../src/core/go/json-errors.js";
import { createStandin, type Standin } from "../../src/emulator.js";

/** The text V8 refuses `text` with. */
function v8Refusal(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`${text} parses`);
}

describe("encoding/json's texts", () => {
  it.each([
    ["x", "'x'"],
    ["'", "'\\''"],
    ['"', "'\"'"],
    ["\\", "'\\\\'"],
    ["\n", "'\\n'"],
    ["\x01", "'\\x01'"],
    ["\x7f", "'\\x7f'"],
    // Go names the first UTF-8 byte, quoted as the rune of that value: é is 0xC3 0xA9, and U+00C3 is Ã.
    ["é", "'Ã'"],
  ])("quoteChar(%j) is %s", (char, quoted) => {
    expect(quoteChar(char)).toBe(quoted);
  });

  it.each([
    ["tru", "unexpected EOF"],
    ['{"a', "unexpected EOF"],
    ["{", "unexpected EOF"],
    ['{"a"', "unexpected EOF"],
    ["x", "invalid character 'x' looking for beginning of value"],
    ['{"a":}', "invalid character '}' looking for beginning of value"],
    ["\x01", "invalid character '\\x01' looking for beginning of value"],
    ["é", "invalid character 'Ã' looking for beginning of value"],
  ])("the syntax error for %j is %s", (text, go) => {
    expect(syntaxError(text, v8Refusal(text))).toBe(go);
  });

  it("names kinds and targets as UnmarshalTypeError does", () => {
    expect([jsonKind("s"), jsonKind(1), jsonKind(true), jsonKind([]), jsonKind({})]).toEqual(["string", "number", "bool", "array", "object"]);
    expect(unmarshalTypeError("bool", "uint64", "JobRevertRequest.JobVersion")).toBe("json: cannot unmarshal bool into Go struct field JobRevertRequest.JobVersion of type uint64");
    expect(unmarshalTypeError("array", "structs.SessionRequest")).toBe("json: cannot unmarshal array into Go value of type structs.SessionRequest");
    expect(maxDepthError("[")).toBe("invalid character '[' exceeded max depth");
  });
});

describe("the decoders that use them", () => {
  const send = async (app: Standin["scheduler"], path: string, body: string) => {
    const res = await app.request(path, { method: "PUT", body });
    return [res.status, await res.text()];
  };

  // Each of these answered differently before the texts were written in one place.
  it("the scheduler names a control character or a non-ASCII byte as Go does", async () => {
    const emu = await createStandin();
    expect(await send(emu.scheduler, "/v1/jobs", "\x01")).toEqual([400, "invalid character '\\x01' looking for beginning of value"]);
    expect(await send(emu.scheduler, "/v1/jobs", "é")).toEqual([400, "invalid character 'Ã' looking for beginning of value"]);
  });

  it("the registry says unexpected EOF for a document that stops early", async () => {
    const emu = await createStandin();
    expect(await send(emu.registry, "/v1/session/create", "{")).toEqual([400, "Request decode failed: unexpected EOF"]);
  });

  it("a bool where Nomad wants a struct is named bool, not boolean", async () => {
    const emu = await createStandin();
    const [node] = (await (await emu.scheduler.request("/v1/nodes")).json()) as Array<{ ID: string }>;
    expect(await send(emu.scheduler, `/v1/node/${node!.ID}/drain`, '{"DrainSpec": true}')).toEqual([
      400,
      "json: cannot unmarshal bool into Go struct field NodeUpdateDrainRequest.DrainSpec of type api.DrainSpec",
    ]);
    const acl = await createStandin({
      fixture: { scheduler: { acl: { enabled: true, tokens: [{ SecretID: "00000000-0000-4000-8000-000000000001", Name: "root", Type: "management" }] } } },
    });
    const res = await acl.scheduler.request("/v1/acl/token", { method: "PUT", headers: { "X-Nomad-Token": "00000000-0000-4000-8000-000000000001" }, body: "true" });
    expect([res.status, await res.text()]).toEqual([400, "json: cannot unmarshal bool into Go value of type struct"]);
  });
});

describe("null where Go decodes into a string", () => {
  it("a null map element is stored as the zero value, as Go's decoder does (it was refused)", async () => {
    const emu = await createStandin();
    const put = await emu.registry.request("/v1/catalog/register", {
      method: "PUT",
      body: JSON.stringify({ Node: "n9", Address: "10.0.0.9", NodeMeta: { rack: null, zone: "a" } }),
    });
    expect([put.status, await put.text()]).toEqual([200, "true"]);
    const nodes = (await (await emu.registry.request("/v1/catalog/nodes")).json()) as Array<{ Node: string; Meta: Record<string, string> }>;
    expect(nodes.find((n) => n.Node === "n9")?.Meta).toEqual({ rack: "", zone: "a" });
    const bad = await emu.registry.request("/v1/catalog/register", { method: "PUT", body: JSON.stringify({ Node: "n9", Address: "10.0.0.9", NodeMeta: { rack: 1 } }) });
    expect([bad.status, await bad.text()]).toEqual([400, "Request decode failed: json: cannot unmarshal number into Go struct field .NodeMeta of type string"]);
  });
});
