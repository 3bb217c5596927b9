/**
 * Oracle: Nomad v1.9.7's own HCL job parser against standin's
 * `POST /v1/jobs/parse`. test/oracles/hcl is a Go program that answers the
 * request as Nomad's handler does (jobspec2.ParseWithConfig with AllowFS
 * false and the variables as VarContent, then api.Job.Canonicalize when
 * asked, encoded with go-msgpack/v2's JsonHandle), built from
 * ../shared/oracle-sources (see test/oracles/hcl/SOURCES.md). Every job file
 * of the corpus goes to both, with `Canonicalize` false and true, and the
 * answers are compared as whole JSON trees, key presence included; a refused
 * file must be refused with the same status and the same first line.
 *
 * Corpus: Nomad v1.9.7's jobspec2/test-fixtures (copied with their licence),
 * test/scheduler/hcl-corpus (good and bad files), test/oracles/hcl/corpus,
 * and any directory named in STANDIN_HCL_ORACLE_EXTRA (colon-separated, read
 * recursively: point it at a Nomad checkout for a wider local run).
 *
 * Differences standin keeps on purpose are listed in KNOWN_DIFFERENCES and in
 * docs/known-differences.md; anything else fails, and so does a listed
 * difference the corpus no longer shows (the entry must go).
 * STANDIN_SKIP_GO=1 skips the suite on a machine without Go.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { buildGoProgram, PROJECT_ROOT, SHARED, SKIP_GO } from "./support/go-build.js";
import { describeDifference, type Difference, type Json, jsonDifferences } from "./support/json-tree.js";

const ROOT = PROJECT_ROOT;
const PROGRAM = resolve(ROOT, "test/oracles/hcl");
/** Nomad v1.9.7's jobspec2/test-fixtures (MPL-2.0 test data, kept with their licence: see SOURCES.md). */
const NOMAD_FIXTURES = resolve(PROGRAM, "nomad-v1.9.7-jobspec2-test-fixtures");
const STANDIN_CORPUS = resolve(ROOT, "test/scheduler/hcl-corpus");
const ORACLE_CORPUS = resolve(PROGRAM, "corpus");
const BINARY = resolve(ROOT, "node_modules/.cache/standin-oracles/hcl");
const SKIP = SKIP_GO;
const EXTRA = (process.env.STANDIN_HCL_ORACLE_EXTRA ?? "").split(":").filter(Boolean);

/**
 * Differences standin keeps, each with the reason docs/known-differences.md
 * gives: `<general path> <kind>` for a field in any job, `<file> error` for
 * a file whose refusal differs.
 */
const KNOWN_DIFFERENCES: Record<string, string> = {
  "oracle:bad/json-unclosed.hcl error": "a job in HCL's JSON syntax is read through a native rendering: malformed JSON is refused in JavaScript's words",
  "oracle:bad/json-wrong-type.hcl error": "a job in HCL's JSON syntax is read through a native rendering: its diagnostics point into that rendering",
  "oracle:bad/json-unknown-argument.hcl error": "a job in HCL's JSON syntax is read through a native rendering: an unknown property is a native `Unsupported argument` there",
  "oracle:bad/length-of-object.hcl error": "standin's values do not tell an object from a map: `length` of an object literal counts it where cty refuses it",
};

interface Case {
  readonly name: string;
  readonly hcl: string;
  readonly variables: string;
}

interface OracleAnswer {
  readonly name: string;
  readonly status: number;
  readonly body: string;
  /** Every HCL diagnostic of a refusal (the body shows the first and counts the rest). */
  readonly diagnostics?: readonly string[];
}

/** `NAME.vars.json` of the standin corpus as a variables file (the corpus test's own rule). */
function variablesFromJson(file: string): string {
  if (!existsSync(file)) return "";
  const values = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  return Object.entries(values)
    .map(([name, value]) => `${name} = ${JSON.stringify(value)}`)
    .join("\n");
}

function filesUnder(dir: string, accept: (file: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(dir).sort()) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...filesUnder(path, accept));
    else if (accept(entry)) found.push(path);
  }
  return found;
}

function corpus(): Case[] {
  const cases: Case[] = [];
  for (const file of filesUnder(NOMAD_FIXTURES, (f) => f.endsWith(".hcl"))) {
    cases.push({ name: `nomad:${relative(NOMAD_FIXTURES, file)}`, hcl: readFileSync(file, "utf8"), variables: "" });
  }
  for (const file of filesUnder(STANDIN_CORPUS, (f) => f.endsWith(".nomad.hcl"))) {
    const variables = variablesFromJson(file.replace(/\.nomad\.hcl$/, ".vars.json"));
    cases.push({ name: `hcl-corpus:${relative(STANDIN_CORPUS, file)}`, hcl: readFileSync(file, "utf8"), variables });
  }
  for (const file of filesUnder(ORACLE_CORPUS, (f) => f.endsWith(".hcl") && !f.endsWith(".vars.hcl"))) {
    const varsFile = file.replace(/\.hcl$/, ".vars.hcl");
    const variables = existsSync(varsFile) ? readFileSync(varsFile, "utf8") : "";
    cases.push({ name: `oracle:${relative(ORACLE_CORPUS, file)}`, hcl: readFileSync(file, "utf8"), variables });
  }
  for (const dir of EXTRA) {
    for (const file of filesUnder(dir, (f) => f.endsWith(".hcl") || f.endsWith(".nomad"))) {
      cases.push({ name: `extra:${relative(dir, file)}`, hcl: readFileSync(file, "utf8"), variables: "" });
    }
  }
  return cases;
}

async function build(): Promise<void> {
  // Nomad 1.9.7's tree first: its api is also in go-clients, at a later commit.
  const gopath = [resolve(SHARED, "oracle-sources/nomad-v1.9.7-jobspec2"), resolve(SHARED, "go-clients/gopath")];
  await buildGoProgram({ what: "the HCL oracle", source: PROGRAM, gopath, binary: BINARY });
}

/** All requests through one oracle process: JSON lines in, JSON lines out. */
function askOracle(requests: readonly (Case & { canonicalize: boolean })[]): Promise<OracleAnswer[]> {
  return new Promise((done, fail) => {
    const child = spawn(BINARY, [], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
    child.on("error", fail);
    child.on("close", (code) => {
      if (code !== 0) return fail(new Error(`the HCL oracle exited with ${code}: ${err}`));
      done(
        out
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as OracleAnswer),
      );
    });
    child.stdin.end(`${requests.map((r) => JSON.stringify({ name: r.name, hcl: r.hcl, variables: r.variables, canonicalize: r.canonicalize })).join("\n")}\n`);
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** `uuidv4()` draws a fresh id on each side: two UUIDs in the same place agree. */
const sameLeaf = (oracle: Json, standin: Json) =>
  Object.is(oracle, standin) || (typeof oracle === "string" && typeof standin === "string" && UUID.test(oracle) && UUID.test(standin));

const firstLine = (text: string) => text.split("\n")[0] ?? "";
/** A first line short enough for a report (a 200 body is a whole job). */
const shown = (text: string) => JSON.stringify(firstLine(text).slice(0, 300));

interface Outcome {
  readonly name: string;
  readonly canonicalize: boolean;
  /** Differences no entry of KNOWN_DIFFERENCES explains, as report lines. */
  readonly unexplained: string[];
  /** The KNOWN_DIFFERENCES keys this case shows. */
  readonly known: string[];
}

const OTHERS = /, and (\d+) other diagnostic\(s\)$/;

/**
 * Two refusals agree when their status and first line are the same or, when
 * Nomad found several problems, when standin's first is one of Nomad's (and,
 * for a body that counts "N other diagnostic(s)", both count the same): hcl
 * checks a body's arguments and jobspec2 its variables in Go map order, so
 * which problem Nomad names first changes from run to run. Nomad lists them
 * either one a line (jobspec2's own errors) or first-and-count (hcl's).
 */
function sameRefusal(oracle: OracleAnswer, status: number, text: string): boolean {
  if (oracle.status !== status) return false;
  if (firstLine(oracle.body) === firstLine(text)) return true;
  const body = (t: string) => t.replace(/^Failed to parse job: /, "");
  const nomad = oracle.diagnostics ?? body(oracle.body).split("\n");
  if (nomad.length < 2) return false;
  const ours = body(firstLine(text));
  const counted = OTHERS.exec(ours);
  if (counted && Number(counted[1]) !== nomad.length - 1) return false;
  return nomad.includes(ours.replace(OTHERS, ""));
}

function compare(request: Case & { canonicalize: boolean }, oracle: OracleAnswer, status: number, text: string): Outcome {
  const outcome: Outcome = { name: request.name, canonicalize: request.canonicalize, unexplained: [], known: [] };
  if (oracle.status !== 200 || status !== 200) {
    if (sameRefusal(oracle, status, text)) return outcome;
    const key = `${request.name} error`;
    if (key in KNOWN_DIFFERENCES) outcome.known.push(key);
    else outcome.unexplained.push(`status/error: Nomad ${oracle.status} ${shown(oracle.body)}, standin ${status} ${shown(text)}`);
    return outcome;
  }
  for (const d of jsonDifferences(JSON.parse(oracle.body) as Json, JSON.parse(text) as Json, sameLeaf)) {
    const key = `${d.where} ${d.kind}`;
    if (key in KNOWN_DIFFERENCES) outcome.known.push(key);
    else outcome.unexplained.push(describeDifference(d));
  }
  return outcome;
}

describe.skipIf(SKIP)("Nomad v1.9.7's HCL parser as the oracle for POST /v1/jobs/parse", () => {
  const cases = corpus();
  const requests = cases.flatMap((c) => [false, true].map((canonicalize) => ({ ...c, canonicalize })));
  const outcomes = new Map<string, Outcome>();
  /** Files meant to parse (ours, outside `bad/`) that Nomad refused: a typo there would only compare two refusals. */
  const refusedGoodFiles: string[] = [];
  let emu: Standin;

  beforeAll(async () => {
    await build();
    const answers = await askOracle(requests);
    expect(answers.length).toBe(requests.length);
    emu = await createStandin();
    for (const [i, request] of requests.entries()) {
      const meantToParse = (request.name.startsWith("oracle:") || request.name.startsWith("hcl-corpus:")) && !request.name.includes(":bad/");
      if (meantToParse && answers[i]!.status !== 200) refusedGoodFiles.push(`${request.name}: ${firstLine(answers[i]!.body)}`);
      const answer = await call(emu.scheduler, "POST", "/v1/jobs/parse", { JobHCL: request.hcl, Variables: request.variables, Canonicalize: request.canonicalize });
      outcomes.set(`${request.name} ${request.canonicalize}`, compare(request, answers[i]!, answer.status, answer.text));
    }
    const differing = [...outcomes.values()].filter((o) => o.unexplained.length || o.known.length).length;
    console.info(`HCL oracle: ${cases.length} files, ${outcomes.size} cases, ${outcomes.size - differing} identical, ${differing} differing (known or not)`);
  }, 900_000);
  afterAll(() => emu?.close?.());

  it("has a corpus of both standin's and the oracle's own job files, good and bad", () => {
    expect(cases.filter((c) => c.name.startsWith("oracle:")).length).toBeGreaterThanOrEqual(10);
    expect(cases.filter((c) => c.name.startsWith("hcl-corpus:bad/")).length).toBeGreaterThanOrEqual(5);
  });

  it("Nomad parses every job file of the corpus that is not under bad/", () => {
    expect(refusedGoodFiles).toEqual([]);
  });

  for (const request of requests) {
    it(`${request.name} with Canonicalize ${request.canonicalize}`, () => {
      const outcome = outcomes.get(`${request.name} ${request.canonicalize}`);
      expect(outcome, "not compared").toBeDefined();
      expect(outcome!.unexplained, `${outcome!.unexplained.length} difference(s) from Nomad:\n${outcome!.unexplained.join("\n")}`).toEqual([]);
    });
  }

  it.skipIf(EXTRA.length > 0)("lists no known difference the corpus no longer shows", () => {
    const seen = new Set([...outcomes.values()].flatMap((o) => o.known));
    expect(Object.keys(KNOWN_DIFFERENCES).filter((key) => !seen.has(key))).toEqual([]);
  });
});

describe("the JSON tree comparison", () => {
  it("tells a null from an absent key, names paths, and lets two UUIDs agree", () => {
    const oracle: Json = { A: null, B: [{ C: 1 }, { C: 2 }], D: "0b5f6a1e-3d0e-4c55-9d0b-2f9c1c9e0001", E: [] };
    const standin: Json = { B: [{ C: 1 }, { C: 3, F: null }], D: "7a1f6a6e-3d0e-4c55-9d0b-2f9c1c9e0002", E: null };
    expect(jsonDifferences(oracle, standin, sameLeaf).map(describeDifference)).toEqual([
      "A: missing (Nomad null, standin absent)",
      "B[1].C: value (Nomad 2, standin 3)",
      "B[1].F: extra (Nomad absent, standin null)",
      "E: type (Nomad [], standin null)",
    ]);
    expect(jsonDifferences(oracle, standin, sameLeaf).map((d: Difference) => d.where)).toEqual(["A", "B[].C", "B[].F", "E"]);
  });
});
