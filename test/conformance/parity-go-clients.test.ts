/**
 * Parity proved sound on real traffic: the official Go clients' checks
 * (test/conformance/go) run through `standin record` in front of a standin
 * playing the real product, then `standin parity` replays the recording
 * against a fresh standin of another seed: 0 differences. Any difference
 * here is a mapping the parity comparison gets wrong (IDs, indexes, times,
 * secrets), since both sides are the same code.
 *
 * The upstream runs on the realtime clock, as a real product's time passes,
 * and the suites chosen use the products' own API, but nomad-search, which
 * moves the upstream's clock once through standin's control API (a real
 * product has none): the parity replay moves its clock by the recorded wall
 * time between requests, and by as much as a recorded control request
 * moved its own.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { parity, type ParityReport } from "../../src/parity/compare/index.js";
import { startRecorder } from "../../src/parity/record/recorder.js";
import type { Recording } from "../../src/parity/recording.js";
import { startStandin } from "../../src/server.js";
import { conformanceProgram } from "./support/conformance-program.js";
import { buildGoProgram, SKIP_GO } from "./support/go-build.js";

const run = promisify(execFile);
const PROGRAM = conformanceProgram("the parity check of the conformance suite", "conformance-parity");

const MANAGEMENT_SECRET = "6a1f6a6e-3d0e-4c55-9d0b-2f9c1c9e0002";
const ACL_FIXTURE = { scheduler: { acl: { enabled: true, tokens: [{ SecretID: MANAGEMENT_SECRET, Name: "root", Type: "management" }] } } };

/**
 * A search read right after 21 batch jobs were registered reports the
 * index of the last write, and on the realtime upstream the evaluations of
 * the jobs registered about 100 ms before are processed by its own timers,
 * which race the request by a millisecond or two: the replay, at the
 * recorded instant exactly, may have processed one evaluation more or less
 * (a real Nomad's evaluation broker races the same way).
 */
const SEARCH_INDEX_RACE = ["headers.x-nomad-index", "$.Index"].map((path) => ({ route: "PUT /v1/search*", path, reason: "timer-driven writes race the realtime upstream" }));

/** Suites of the Go program, with the control API's paths each uses (none but the clock's). */
const SUITES: ReadonlyArray<{ suite: string; fixture: object; control?: readonly string[]; waivers?: readonly object[] }> = [
  { suite: "consul-txn", fixture: {} },
  { suite: "nomad-pools", fixture: {} },
  { suite: "nomad-acl", fixture: ACL_FIXTURE },
  { suite: "nomad-search", fixture: {}, control: ["/_standin/clock/advance"], waivers: SEARCH_INDEX_RACE },
];

type Result = { check: string; ok: boolean; error?: string };

describe.skipIf(SKIP_GO)("standin record → standin parity on the official Go clients' traffic", () => {
  beforeAll(() => buildGoProgram(PROGRAM), 600_000);

  for (const { suite, fixture, control = [], waivers = [] } of SUITES) {
    describe(suite, () => {
      let results: Result[] = [];
      let recording: Recording;
      let report: ParityReport;

      beforeAll(async () => {
        const upstream = await startStandin({ ports: { scheduler: 0, registry: 0, echo: 0 }, fixture, seed: 7, clock: { start: "now", mode: "realtime" } });
        try {
          const recorder = await startRecorder({
            upstreams: { scheduler: upstream.urls.scheduler, registry: upstream.urls.registry },
            ports: { scheduler: 0, registry: 0 },
          });
          try {
            const env = {
              ...process.env,
              CONSUL_HTTP_ADDR: recorder.urls.registry!.replace(/^https?:\/\//, ""),
              NOMAD_ADDR: recorder.urls.scheduler!,
              NOMAD_TOKEN: MANAGEMENT_SECRET,
              STANDIN_CONTROL_URL: recorder.urls.scheduler!,
            };
            const { stdout } = await run(PROGRAM.binary, [suite], { env, timeout: 600_000, maxBuffer: 16 << 20 });
            results = stdout
              .split("\n")
              .filter((line) => line.trim() !== "")
              .map((line) => JSON.parse(line) as Result);
          } finally {
            recording = await recorder.close();
          }
        } finally {
          await upstream.close();
        }
        report = await parity(recording, { fixture: [fixture], waivers });
      }, 900_000);

      it("the checks pass through the recorder, the control API used for the clock alone (a real product has none)", () => {
        expect(recording.exchanges.filter((exchange) => exchange.path.startsWith("/_standin/")).map((exchange) => exchange.path)).toEqual(control);
        expect(results.length).toBeGreaterThan(0);
        expect(results.filter((result) => !result.ok)).toEqual([]);
      });

      it("the recording holds the traffic, and parity finds no difference", () => {
        expect(recording.exchanges.length).toBeGreaterThan(5);
        expect(recording.truncated).toBe(false);
        expect(report.summary.exchanges).toBe(recording.exchanges.length);
        expect(report.differences.filter((difference) => difference.waived === undefined)).toEqual([]);
        expect(report.ok).toBe(true);
        // The control API's requests are replayed for their effect (the clock moved as far) and listed as not compared.
        expect(report.summary.skipped).toBe(control.length);
      });
    });
  }
});
