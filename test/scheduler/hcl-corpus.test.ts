/**
 * The HCL2 job-file corpus (`test/scheduler/hcl-corpus/`): every
 * `NAME.nomad.hcl` is posted to `POST /v1/jobs/parse` as Nomad's
 * JobsParseRequest (`{JobHCL, Variables, Canonicalize}`) and its answer is
 * compared, field by field, with the api.Job written by hand from Nomad's
 * job-specification docs and api structs in `NAME.expected.json`
 * (`Canonicalize: false`) and, where present, `NAME.canonical.expected.json`
 * (`Canonicalize: true`). `NAME.vars.json` holds the values sent as the
 * request's `Variables` (a variables file's content: `name = <value>` lines).
 * `bad/NAME.nomad.hcl` must be refused with 400 and exactly the body in
 * `bad/NAME.expected.txt` (Nomad's `Failed to parse job: input.hcl:L,C-C: …`).
 *
 * The comparison reports every difference with its path
 * (`TaskGroups[0].Tasks[1].Config.args[2]`), not one giant diff:
 * - every field the expected file names must be there with an equal value
 *   (an explicit `null` in the expected file demands null);
 * - a field the expected file leaves out must be null, or the Go zero value
 *   of a non-pointer field (`""`, `0`, `false`: api.Task.Driver, Port.To,
 *   ServiceCheck.Interval… always come out); anything else is unexpected;
 * - inside free-form maps (config, meta, env, scaling policy…) the keys must
 *   be exactly the expected ones: there is no zero-value leniency there.
 */
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { call } from "../support/call.js";

const CORPUS = join(import.meta.dirname, "hcl-corpus");
const BAD = join(CORPUS, "bad");
const SUFFIX = ".nomad.hcl";

/** Fields whose values are maps keyed by the user (labels, free-form config): their key sets must match exactly. */
const USER_KEYED = new Set(["Config", "Meta", "Env", "Policy", "GetterOptions", "GetterHeaders", "CanaryMeta", "TaggedAddresses", "Header", "Volumes", "Args"]);

/**
 * Files whose expectation (Nomad's behaviour) standin departs from on purpose,
 * each named in docs/known-differences.md: they run as `it.fails`, so the
 * suite stays green while the difference is documented and turns red the day
 * it is closed (then the entry goes).
 */
const KNOWN_DIFFERENCES: Record<string, string> = {};

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => typeof v === "object" && v !== null && !Array.isArray(v);
const show = (v: unknown): string => JSON.stringify(v);

/** Every difference between what was expected and what came back, each with its path. */
function differences(expected: Json, actual: Json, path = "", userKeyed = false): string[] {
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected ${show(expected)}, got ${show(actual)}`];
    const found: string[] = [];
    if (actual.length !== expected.length) found.push(`${path}: expected ${expected.length} item(s), got ${actual.length}: ${show(actual)}`);
    for (let i = 0; i < Math.min(expected.length, actual.length); i++) found.push(...differences(expected[i]!, actual[i]!, `${path}[${i}]`, userKeyed));
    return found;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) return [`${path}: expected an object ${show(expected)}, got ${show(actual)}`];
    const found: string[] = [];
    for (const [key, value] of Object.entries(expected)) {
      const at = path ? `${path}.${key}` : key;
      if (!(key in actual)) {
        // A struct field must always be on the wire; a missing null is the only thing that is fine to leave out of a map.
        if (userKeyed || value !== null) found.push(`${at}: missing (expected ${show(value)})`);
        continue;
      }
      found.push(...differences(value, actual[key]!, at, userKeyed || USER_KEYED.has(key)));
    }
    for (const [key, value] of Object.entries(actual)) {
      if (key in expected) continue;
      const at = path ? `${path}.${key}` : key;
      if (userKeyed) found.push(`${at}: unexpected key with ${show(value)}`);
      else if (!isGoZero(value)) found.push(`${at}: unexpected ${show(value)} (the file does not set it)`);
    }
    return found;
  }
  return Object.is(expected, actual) || expected === actual ? [] : [`${path}: expected ${show(expected)}, got ${show(actual)}`];
}

/** null, or the zero value Go's encoder writes for a non-pointer scalar field. */
function isGoZero(value: Json): boolean {
  return value === null || value === "" || value === 0 || value === false;
}

/** A variables file's content from `NAME.vars.json`: JSON values are HCL literals (objects with `"k": v` items too). */
function variablesText(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join("\n");
}

function corpusNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(SUFFIX))
    .map((f) => f.slice(0, -SUFFIX.length))
    .sort();
}

function readJson(file: string): Json {
  return JSON.parse(readFileSync(file, "utf8")) as Json;
}

async function parse(name: string, dir: string, canonicalize: boolean) {
  const emu = await createStandin();
  const body: Record<string, unknown> = { JobHCL: readFileSync(join(dir, name + SUFFIX), "utf8"), Canonicalize: canonicalize };
  const varsFile = join(dir, `${name}.vars.json`);
  if (existsSync(varsFile)) body.Variables = variablesText(readJson(varsFile) as Record<string, unknown>);
  return call(emu.scheduler, "POST", "/v1/jobs/parse", body);
}

describe("the HCL2 job-file corpus through POST /v1/jobs/parse", () => {
  const names = corpusNames(CORPUS);

  it("has at least 30 job files, each with its expected job, and a handful of bad files; known differences name files that exist", () => {
    for (const name of Object.keys(KNOWN_DIFFERENCES)) expect(names, name).toContain(name);
    expect(names.length).toBeGreaterThanOrEqual(30);
    for (const name of names) expect(existsSync(join(CORPUS, `${name}.expected.json`)), name).toBe(true);
    const bad = corpusNames(BAD);
    expect(bad.length).toBeGreaterThanOrEqual(5);
    for (const name of bad) expect(existsSync(join(BAD, `${name}.expected.txt`)), name).toBe(true);
  });

  for (const name of names) {
    const known = KNOWN_DIFFERENCES[name];
    (known ? it.fails : it)(`${name}${SUFFIX} parses to ${name}.expected.json${known ? ` (known difference: ${known})` : ""}`, async () => {
      const answer = await parse(name, CORPUS, false);
      expect(answer.status, answer.text).toBe(200);
      const found = differences(readJson(join(CORPUS, `${name}.expected.json`)), answer.body as Json);
      expect(found, `${name}: ${found.length} difference(s):\n${found.join("\n")}`).toEqual([]);
    });

    const canonical = join(CORPUS, `${name}.canonical.expected.json`);
    if (existsSync(canonical)) {
      it(`${name}${SUFFIX} with Canonicalize parses to ${name}.canonical.expected.json`, async () => {
        const answer = await parse(name, CORPUS, true);
        expect(answer.status, answer.text).toBe(200);
        const found = differences(readJson(canonical), answer.body as Json);
        expect(found, `${name} (canonical): ${found.length} difference(s):\n${found.join("\n")}`).toEqual([]);
      });
    }
  }

  for (const name of corpusNames(BAD)) {
    it(`bad/${name}${SUFFIX} is refused with Nomad's diagnostic`, async () => {
      const answer = await parse(name, BAD, false);
      expect(answer.text).toBe(readFileSync(join(BAD, `${name}.expected.txt`), "utf8"));
      expect(answer.status).toBe(400);
    });
  }
});

describe("the corpus comparison itself", () => {
  it("names the path of every difference: a wrong value, a missing field, an unexpected one, a length", () => {
    const expected: Json = { ID: "a", TaskGroups: [{ Name: "g", Count: null, Tasks: [{ Config: { args: ["x", "y"] } }] }] };
    const actual: Json = { ID: "a", Priority: 50, Driver: "", TaskGroups: [{ Name: "h", Count: 0, Tasks: [{ Config: { args: ["x"], extra: "" } }] }] };
    expect(differences(expected, actual)).toEqual([
      'TaskGroups[0].Name: expected "g", got "h"',
      "TaskGroups[0].Count: expected null, got 0",
      'TaskGroups[0].Tasks[0].Config.args: expected 2 item(s), got 1: ["x"]',
      'TaskGroups[0].Tasks[0].Config.extra: unexpected key with ""',
      "Priority: unexpected 50 (the file does not set it)",
    ]);
  });

  it("writes vars.json values as a variables file's lines", () => {
    expect(variablesText({ a: "x", n: 5, l: ["p"], o: { k: true } })).toBe('a = "x"\nn = 5\nl = ["p"]\no = {"k":true}');
  });
});
