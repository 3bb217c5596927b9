/**
 * Wire shapes as Nomad's encoder writes them: Allocation and Evaluation carry
 * a struct-level omitempty, so their reads, the lists of full structs and the
 * event stream payloads leave out zero fields; the list stubs keep theirs; and
 * filters still see the omitted fields (go-bexpr runs over the Go struct).
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

const controllers: AbortController[] = [];
afterEach(() => {
  for (const c of controllers.splice(0)) c.abort();
});

const job = {
  ID: "web",
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
};

async function placed(): Promise<{ emu: Standin; evalId: string; allocId: string }> {
  const emu = await createStandin();
  const reg = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job });
  expect(reg.status, reg.text).toBe(200);
  emu.clock.advance("100ms");
  const [stub] = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
  return { emu, evalId: reg.body.EvalID, allocId: stub!.ID };
}

/** The keys whose value is Go's zero (what omitempty leaves out). */
function zeroKeys(o: Json): string[] {
  return Object.entries(o)
    .filter(
      ([, v]) => v === null || v === "" || v === 0 || v === false || (Array.isArray(v) && v.length === 0) || (typeof v === "object" && v !== null && Object.keys(v).length === 0),
    )
    .map(([k]) => k);
}

describe("Evaluation and Allocation omit zero fields", () => {
  it("an evaluation read leaves out NodeID, BlockedEval, AnnotatePlan, … and keeps what is set", async () => {
    const { emu, evalId } = await placed();
    const evaluation = (await call(emu.scheduler, "GET", `/v1/evaluation/${evalId}`)).body as Json;
    expect(zeroKeys(evaluation)).toEqual([]);
    for (const key of [
      "NodeID",
      "NodeModifyIndex",
      "BlockedEval",
      "NextEval",
      "PreviousEval",
      "AnnotatePlan",
      "EscapedComputedClass",
      "Wait",
      "WaitUntil",
      "StatusDescription",
      "RelatedEvals",
      "FailedTGAllocs",
      "LeaderACL",
      "SnapshotIndex",
    ]) {
      expect(evaluation, key).not.toHaveProperty(key);
    }
    expect(evaluation).toMatchObject({ ID: evalId, JobID: "web", Status: "complete", Type: "service", TriggeredBy: "job-register", Priority: 50, Namespace: "default" });
    // A non-empty map is kept even when its values are zero.
    expect(evaluation.QueuedAllocations).toEqual({ web: 0 });
  });

  it("GET /v1/evaluations and /v1/job/:id/evaluations return full evaluations, trimmed the same way", async () => {
    const { emu, evalId } = await placed();
    const single = (await call(emu.scheduler, "GET", `/v1/evaluation/${evalId}`)).body;
    expect((await call(emu.scheduler, "GET", "/v1/evaluations")).body).toEqual([single]);
    expect((await call(emu.scheduler, "GET", "/v1/job/web/evaluations")).body).toEqual([single]);
  });

  it('filters still see the omitted fields: NodeID == "" matches the evaluation without one', async () => {
    const { emu, evalId } = await placed();
    const matched = await call(emu.scheduler, "GET", `/v1/evaluations?filter=${encodeURIComponent('NodeID == "" and AnnotatePlan == false')}`);
    expect(matched.status, matched.text).toBe(200);
    expect(matched.body.map((e: Json) => e.ID)).toEqual([evalId]);
    expect(matched.body[0]).not.toHaveProperty("NodeID");
    const none = await call(emu.scheduler, "GET", `/v1/evaluations?filter=${encodeURIComponent('NodeID != ""')}`);
    expect(none.body).toEqual([]);
  });

  it("an allocation read leaves out its zero fields; the stub keeps them", async () => {
    const { emu, allocId } = await placed();
    const full = (await call(emu.scheduler, "GET", `/v1/allocation/${allocId}`)).body as Json;
    expect(zeroKeys(full)).toEqual([]);
    for (const key of [
      "PreviousAllocation",
      "NextAllocation",
      "FollowupEvalID",
      "RescheduleTracker",
      "DesiredTransition",
      "DesiredDescription",
      "TaskStates",
      "PreemptedAllocations",
      "PreemptedByAllocation",
      "DeploymentStatus",
    ]) {
      expect(full, key).not.toHaveProperty(key);
    }
    expect(full).toMatchObject({ ID: allocId, JobID: "web", TaskGroup: "web", DesiredStatus: "run", ClientStatus: "pending", Name: "web.web[0]" });
    expect(full.Job.ID).toBe("web");
    expect(full.AllocatedResources.Shared.DiskMB).toBe(300);

    const [stub] = (await call(emu.scheduler, "GET", "/v1/job/web/allocations")).body as Json[];
    expect(stub).toMatchObject({
      FollowupEvalID: "",
      NextAllocation: "",
      PreemptedByAllocation: "",
      RescheduleTracker: null,
      PreemptedAllocations: null,
      DesiredDescription: "",
      TaskStates: null,
    });
    expect(stub.DesiredTransition).toEqual({ ForceReschedule: null, Migrate: null, NoShutdownDelay: null, Reschedule: null });
    expect((await call(emu.scheduler, "GET", "/v1/allocations")).body).toEqual([stub]);
  });

  it("a node's allocations are full allocations, trimmed", async () => {
    const { emu, allocId } = await placed();
    const full = (await call(emu.scheduler, "GET", `/v1/allocation/${allocId}`)).body as Json;
    const onNode = (await call(emu.scheduler, "GET", `/v1/node/${full.NodeID}/allocations`)).body as Json[];
    expect(onNode).toHaveLength(1);
    expect(zeroKeys(onNode[0]!)).toEqual([]);
    expect(onNode[0]).not.toHaveProperty("FollowupEvalID");
  });

  it("allocation filters on /v1/allocations still see omitted fields", async () => {
    const { emu, allocId } = await placed();
    const res = await call(emu.scheduler, "GET", `/v1/allocations?filter=${encodeURIComponent('FollowupEvalID == "" and PreviousAllocation == ""')}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.map((a: Json) => a.ID)).toEqual([allocId]);
  });

  it("event stream payloads drop zero fields too (the stream uses the same encoder)", async () => {
    const { emu } = await placed();
    const controller = new AbortController();
    controllers.push(controller);
    const res = await emu.scheduler.request("/v1/event/stream?index=1&topic=Evaluation&topic=Allocation", { signal: controller.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const wanted = () => text.split("\n").filter((l) => l.startsWith('{"Events"')).length;
    while (wanted() < 2) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    const events = text
      .split("\n")
      .filter((l) => l.startsWith('{"Events"'))
      .flatMap((l) => (JSON.parse(l) as Json).Events as Json[]);
    const evaluation = events.find((e) => e.Topic === "Evaluation")!.Payload.Evaluation as Json;
    expect(zeroKeys(evaluation)).toEqual([]);
    expect(evaluation).not.toHaveProperty("NodeID");
    expect(evaluation.JobID).toBe("web");
    const alloc = events.find((e) => e.Topic === "Allocation")!.Payload.Allocation as Json;
    expect(zeroKeys(alloc)).toEqual([]);
    expect(alloc).not.toHaveProperty("Job");
    expect(alloc).not.toHaveProperty("FollowupEvalID");
    expect(alloc.ClientStatus).toBe("pending");
  });
});
