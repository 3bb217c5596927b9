/**
 * `/v1/operator/scheduler/configuration` through HTTP: the default, writes
 * with and without `?cas=`, the decoder's and Validate's refusals, the
 * operator ACL, and what the switches do: PauseEvalBroker holds evaluations
 * pending until it is turned off, RejectJobRegistration refuses job writes by
 * non-management tokens. The configuration is state: snapshots carry it.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { callScheduler as req } from "../support/call.js";
import { webJob } from "../support/jobs.js";
import { settleTurns } from "../support/parked.js";

type Json = Record<string, any>;

const PATH = "/v1/operator/scheduler/configuration";
const DEFAULT = {
  SchedulerAlgorithm: "binpack",
  PreemptionConfig: { SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: false, BatchSchedulerEnabled: false, ServiceSchedulerEnabled: false },
  MemoryOversubscriptionEnabled: false,
  RejectJobRegistration: false,
  PauseEvalBroker: false,
  CreateIndex: 1,
  ModifyIndex: 1,
};

const MGMT = "30000000-0000-0000-0000-000000000001";
const OP_READ = "30000000-0000-0000-0000-000000000002";
const OP_WRITE = "30000000-0000-0000-0000-000000000003";
const SUBMIT = "30000000-0000-0000-0000-000000000004";

async function withAcl(): Promise<Standin> {
  return createStandin({
    fixture: {
      scheduler: {
        acl: {
          enabled: true,
          policies: [
            { Name: "op-read", Rules: 'operator { policy = "read" }' },
            { Name: "op-write", Rules: 'operator { policy = "write" }' },
            { Name: "submit", Rules: 'namespace "default" { policy = "write" }' },
          ],
          tokens: [
            { SecretID: MGMT, Name: "root", Type: "management" },
            { SecretID: OP_READ, Name: "op-read", Policies: ["op-read"] },
            { SecretID: OP_WRITE, Name: "op-write", Policies: ["op-write"] },
            { SecretID: SUBMIT, Name: "submit", Policies: ["submit"] },
          ],
        },
      },
    } as never,
  });
}

const config = async (emu: Standin, token?: string) => (await req(emu, "GET", PATH, undefined, token)).body.SchedulerConfig as Json;

describe("GET /v1/operator/scheduler/configuration", () => {
  it("answers the agent's default configuration at index 1, with its QueryMeta in the body and the headers", async () => {
    const emu = await createStandin();
    const res = await req(emu, "GET", PATH);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["Index", "KnownLeader", "LastContact", "NextToken", "SchedulerConfig"]);
    expect(res.body).toEqual({ Index: 1, KnownLeader: true, LastContact: 0, NextToken: "", SchedulerConfig: DEFAULT });
    expect(Object.keys(res.body.SchedulerConfig)).toEqual([...Object.keys(DEFAULT)].sort());
    expect(res.headers.get("X-Nomad-Index")).toBe("1");
    expect(res.headers.get("X-Nomad-KnownLeader")).toBe("true");
  });

  it("is not a blocking query: ?index= past the configuration's answers at once", async () => {
    const emu = await createStandin();
    let answered = false;
    const pending = req(emu, "GET", `${PATH}?index=50&wait=5m`).then((res) => {
      answered = true;
      return res;
    });
    await settleTurns();
    expect(emu.watchers.parked).toBe(0);
    expect(answered).toBe(true);
    expect((await pending).body.Index).toBe(1);
  });
});

describe("PUT /v1/operator/scheduler/configuration", () => {
  it("stores the configuration, canonicalized, and answers {Index, Updated} with the index header", async () => {
    const emu = await createStandin();
    const res = await req(emu, "PUT", PATH, { SchedulerAlgorithm: "", MemoryOversubscriptionEnabled: true, NodeLimitForFeasibilityChecks: 7 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["Index", "Updated"]);
    expect(res.body.Updated).toBe(true);
    expect(res.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    expect(res.body.Index).toBeGreaterThan(1);
    // Omitted fields are Go's zero values (PreemptionConfig included); the empty algorithm is binpack; CreateIndex stays.
    expect(await config(emu)).toEqual({
      ...DEFAULT,
      PreemptionConfig: { SystemSchedulerEnabled: false, SysBatchSchedulerEnabled: false, BatchSchedulerEnabled: false, ServiceSchedulerEnabled: false },
      MemoryOversubscriptionEnabled: true,
      ModifyIndex: res.body.Index,
    });
    // Nomad 1.9.7's SchedulerConfiguration has no NodeLimitForFeasibilityChecks (a later release's field): ignored, never sent.
    expect(Object.keys((await req(emu, "GET", PATH)).body.SchedulerConfig)).not.toContain("NodeLimitForFeasibilityChecks");
    const get = await req(emu, "GET", PATH);
    expect(get.body.Index).toBe(res.body.Index);
    expect(get.headers.get("X-Nomad-Index")).toBe(String(res.body.Index));
    // POST is the same operation.
    expect((await req(emu, "POST", PATH, { SchedulerAlgorithm: "spread" })).status).toBe(200);
    expect((await config(emu)).SchedulerAlgorithm).toBe("spread");
    // Being an unknown key to 1.9.7's decoder, even a value its later uint type refuses is accepted.
    expect((await req(emu, "PUT", PATH, { MemoryOversubscriptionEnabled: true, NodeLimitForFeasibilityChecks: -1 })).status).toBe(200);
  });

  it("with ?cas= writes only when it names the current ModifyIndex; a miss answers Updated false and changes nothing", async () => {
    const emu = await createStandin();
    const miss = await req(emu, "PUT", `${PATH}?cas=99`, { SchedulerAlgorithm: "spread" });
    expect(miss.status).toBe(200);
    expect(miss.body.Updated).toBe(false);
    expect(miss.headers.get("X-Nomad-Index")).toBe(String(miss.body.Index));
    expect(await config(emu)).toEqual(DEFAULT);
    const hit = await req(emu, "PUT", `${PATH}?cas=1`, { SchedulerAlgorithm: "spread" });
    expect(hit.body.Updated).toBe(true);
    const after = await config(emu);
    expect(after).toMatchObject({ SchedulerAlgorithm: "spread", CreateIndex: 1, ModifyIndex: hit.body.Index });
    expect((await req(emu, "PUT", `${PATH}?cas=1`, { SchedulerAlgorithm: "binpack" })).body.Updated).toBe(false);
    expect((await req(emu, "PUT", `${PATH}?cas=${after.ModifyIndex}`, { SchedulerAlgorithm: "binpack" })).body.Updated).toBe(true);
  });

  it("refuses what Nomad refuses, with its status and words, and a refused write changes nothing", async () => {
    const emu = await createStandin();
    const cases: Array<[string, unknown, number, string]> = [
      [PATH, { SchedulerAlgorithm: "fastest" }, 400, "invalid scheduler algorithm: fastest"],
      [
        PATH,
        { PauseEvalBroker: "yes" },
        400,
        "Error parsing scheduler config: json: cannot unmarshal string into Go struct field SchedulerConfiguration.PauseEvalBroker of type bool",
      ],
      [
        PATH,
        { PreemptionConfig: { BatchSchedulerEnabled: 1 } },
        400,
        "Error parsing scheduler config: json: cannot unmarshal number into Go struct field SchedulerConfiguration.PreemptionConfig.BatchSchedulerEnabled of type bool",
      ],
      [
        PATH,
        { PreemptionConfig: [] },
        400,
        "Error parsing scheduler config: json: cannot unmarshal array into Go struct field SchedulerConfiguration.PreemptionConfig of type api.PreemptionConfig",
      ],
      [PATH, [], 400, "Error parsing scheduler config: json: cannot unmarshal array into Go value of type api.SchedulerConfiguration"],
      [PATH, "{", 400, "Error parsing scheduler config: unexpected EOF"],
      [PATH, "", 400, "Error parsing scheduler config: Request body is empty"],
      [`${PATH}?cas=abc`, { PauseEvalBroker: true }, 400, 'Error parsing cas value: strconv.ParseUint: parsing "abc": invalid syntax'],
      [`${PATH}?cas=-1`, { PauseEvalBroker: true }, 400, 'Error parsing cas value: strconv.ParseUint: parsing "-1": invalid syntax'],
      [`${PATH}?cas=18446744073709551616`, { PauseEvalBroker: true }, 400, 'Error parsing cas value: strconv.ParseUint: parsing "18446744073709551616": value out of range'],
    ];
    for (const [path, body, status, text] of cases) expect(await req(emu, "PUT", path, body), JSON.stringify(body)).toMatchObject({ status, text });
    expect(await req(emu, "DELETE", PATH)).toMatchObject({ status: 405, text: "Invalid method" });
    expect(await config(emu)).toEqual(DEFAULT);
  });

  it("needs operator read to read and operator write to write (after the body's checks)", async () => {
    const emu = await withAcl();
    expect(await req(emu, "GET", PATH)).toMatchObject({ status: 403, text: "Permission denied" });
    expect(await req(emu, "GET", PATH, undefined, SUBMIT)).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await req(emu, "GET", PATH, undefined, OP_READ)).status).toBe(200);
    expect(await req(emu, "PUT", PATH, { SchedulerAlgorithm: "x" }, OP_READ)).toMatchObject({ status: 400, text: "invalid scheduler algorithm: x" });
    expect(await req(emu, "PUT", PATH, { PauseEvalBroker: true }, OP_READ)).toMatchObject({ status: 403, text: "Permission denied" });
    expect((await config(emu, MGMT)).PauseEvalBroker).toBe(false);
    expect((await req(emu, "PUT", PATH, { PauseEvalBroker: true }, OP_WRITE)).body.Updated).toBe(true);
    expect((await req(emu, "PUT", PATH, { PauseEvalBroker: false }, MGMT)).body.Updated).toBe(true);
  });

  it("is part of the state: a snapshot restores it and the state hash follows it", async () => {
    const emu = await createStandin();
    const before = emu.stateHash();
    const snapshot = emu.snapshot();
    await req(emu, "PUT", PATH, { SchedulerAlgorithm: "spread", RejectJobRegistration: true });
    expect(emu.stateHash()).not.toBe(before);
    const written = await config(emu);
    const later = emu.snapshot();
    emu.restore(snapshot);
    expect(await config(emu)).toEqual(DEFAULT);
    expect(emu.stateHash()).toBe(before);
    emu.restore(later);
    expect(await config(emu)).toEqual(written);
  });
});

describe("PauseEvalBroker", () => {
  it("holds new evaluations pending until the broker is unpaused, then processes them, higher priority first", async () => {
    const emu = await createStandin();
    expect((await req(emu, "PUT", PATH, { ...DEFAULT, PauseEvalBroker: true })).body.Updated).toBe(true);
    const low = await req(emu, "PUT", "/v1/jobs", { Job: { ...webJob("low"), Priority: 20 } });
    const high = await req(emu, "PUT", "/v1/jobs", { Job: { ...webJob("high"), Priority: 80 } });
    expect([low.status, high.status]).toEqual([200, 200]);
    emu.clock.advance("5m");
    for (const res of [low, high]) expect((await req(emu, "GET", `/v1/evaluation/${res.body.EvalID}`)).body.Status).toBe("pending");
    expect((await req(emu, "GET", "/v1/allocations")).body).toEqual([]);
    expect((await req(emu, "GET", "/v1/job/low")).body.Status).toBe("pending");

    expect((await req(emu, "PUT", PATH, { ...DEFAULT, PauseEvalBroker: false })).body.Updated).toBe(true);
    emu.clock.advance("5s");
    const lowEval = (await req(emu, "GET", `/v1/evaluation/${low.body.EvalID}`)).body;
    const highEval = (await req(emu, "GET", `/v1/evaluation/${high.body.EvalID}`)).body;
    expect([lowEval.Status, highEval.Status]).toEqual(["complete", "complete"]);
    // Created low first, processed high first: the broker's order.
    expect(highEval.ModifyIndex).toBeLessThan(lowEval.ModifyIndex);
    expect(((await req(emu, "GET", "/v1/allocations")).body as Json[]).length).toBeGreaterThan(0);
  });

  it("writing the configuration again while paused, or without unpausing, hands nothing to the broker", async () => {
    const emu = await createStandin();
    await req(emu, "PUT", PATH, { ...DEFAULT, PauseEvalBroker: true });
    const job = await req(emu, "PUT", "/v1/jobs", { Job: webJob("web") });
    await req(emu, "PUT", PATH, { ...DEFAULT, PauseEvalBroker: true, SchedulerAlgorithm: "spread" });
    emu.clock.advance("1m");
    expect((await req(emu, "GET", `/v1/evaluation/${job.body.EvalID}`)).body.Status).toBe("pending");
  });
});

describe("RejectJobRegistration", () => {
  it("refuses job registration, dispatch, scale and revert by non-management tokens, with Nomad's 403", async () => {
    const emu = await withAcl();
    const DISABLED = { status: 403, text: "Job registration, dispatch, and scale are disabled by the scheduler configuration" };
    expect((await req(emu, "PUT", "/v1/jobs", { Job: webJob("web") }, SUBMIT)).status).toBe(200);
    expect((await req(emu, "PUT", "/v1/jobs", { Job: { ...webJob("web"), Meta: { v: "2" } } }, SUBMIT)).status).toBe(200);
    expect((await req(emu, "PUT", PATH, { ...DEFAULT, RejectJobRegistration: true }, MGMT)).body.Updated).toBe(true);
    const jobsBefore = (await req(emu, "GET", "/v1/jobs", undefined, MGMT)).body;

    expect(await req(emu, "PUT", "/v1/jobs", { Job: webJob("api") }, SUBMIT)).toMatchObject(DISABLED);
    expect(await req(emu, "PUT", "/v1/job/web", { Job: { ...webJob("web"), Meta: { v: "3" } } }, SUBMIT)).toMatchObject(DISABLED);
    expect(await req(emu, "PUT", "/v1/job/web/scale", { Count: 2, Target: { Group: "web" } }, SUBMIT)).toMatchObject(DISABLED);
    expect(await req(emu, "PUT", "/v1/job/web/revert", { JobVersion: 0 }, SUBMIT)).toMatchObject(DISABLED);
    // The revert's own checks come first, as Job.Revert's do before doRegister's.
    expect(await req(emu, "PUT", "/v1/job/web/revert", { JobVersion: 1 }, SUBMIT)).toMatchObject({ status: 500, text: "can't revert to current version" });
    expect(await req(emu, "PUT", "/v1/job/web/dispatch", {}, SUBMIT)).toMatchObject(DISABLED);
    expect((await req(emu, "GET", "/v1/jobs", undefined, MGMT)).body).toEqual(jobsBefore);

    // A management token still may; so may anyone once the switch is off.
    expect((await req(emu, "PUT", "/v1/jobs", { Job: webJob("api") }, MGMT)).status).toBe(200);
    await req(emu, "PUT", PATH, { ...DEFAULT, RejectJobRegistration: false }, MGMT);
    expect((await req(emu, "PUT", "/v1/jobs", { Job: webJob("db") }, SUBMIT)).status).toBe(200);
  });

  it("has no effect while ACLs are off (every request is management's)", async () => {
    const emu = await createStandin();
    await req(emu, "PUT", PATH, { ...DEFAULT, RejectJobRegistration: true });
    expect((await req(emu, "PUT", "/v1/jobs", { Job: webJob("web") })).status).toBe(200);
  });
});

describe("scheduler.schedulerConfiguration in a fixture", () => {
  it("sets the fields it names over the default before the fixture's jobs register (a paused broker holds their evals)", async () => {
    const emu = await createStandin({
      fixture: { scheduler: { schedulerConfiguration: { PauseEvalBroker: true, PreemptionConfig: { BatchSchedulerEnabled: true } }, jobs: [webJob("web")] } } as never,
    });
    const conf = await config(emu);
    expect(conf).toMatchObject({
      SchedulerAlgorithm: "binpack",
      PauseEvalBroker: true,
      PreemptionConfig: { SystemSchedulerEnabled: true, BatchSchedulerEnabled: true, SysBatchSchedulerEnabled: false, ServiceSchedulerEnabled: false },
      CreateIndex: 1,
    });
    expect(conf.ModifyIndex).toBeGreaterThan(1);
    emu.clock.advance("1m");
    expect(((await req(emu, "GET", "/v1/job/web/evaluations")).body as Json[]).map((e) => e.Status)).toEqual(["pending"]);
  });

  it("is checked like the rest of the fixture", async () => {
    await expect(createStandin({ fixture: { scheduler: { schedulerConfiguration: { SchedulerAlgorithm: "fastest" } } } as never })).rejects.toThrow(
      /schedulerConfiguration\.SchedulerAlgorithm/,
    );
    await expect(createStandin({ fixture: { scheduler: { schedulerConfiguration: { Paused: true } } } as never })).rejects.toThrow(/schedulerConfiguration/);
  });
});
