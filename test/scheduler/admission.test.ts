/**
 * One admission path for jobs: the same job sent to register, validate,
 * plan, a fixture and the job-register action gets the same answer, worded
 * as each entry point words it (register/plan: 500 multierror; validate: 200
 * with ValidationErrors; fixtures and actions: 400 naming where the job was).
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { call } from "../support/call.js";

type Json = Record<string, any>;

function job(change: (job: Json) => void): Json {
  const body: Json = { ID: "j", Type: "batch", Datacenters: ["dc1"], TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }] };
  change(body);
  return body;
}

const INVALID: Array<[string, Json, string]> = [
  ["a cron spec that does not parse", job((j) => (j.Periodic = { Spec: "not a cron", SpecType: "cron" })), 'Periodic validation failed: Invalid cron spec "not a cron"'],
  ["a group without tasks", job((j) => (j.TaskGroups[0].Tasks = [])), "Missing tasks for task group"],
  ["a priority out of range", job((j) => (j.Priority = 500)), "job priority must be between [1, 100]"],
];

const UNDECODABLE: Array<[string, Json, string]> = [
  [
    "a duration given as a string",
    job((j) => (j.TaskGroups[0].Tasks[0].KillTimeout = "abc")),
    "json: cannot unmarshal string into Go struct field Task.Job.TaskGroups.Tasks.KillTimeout of type time.Duration",
  ],
];

async function everyEntryPoint(body: Json) {
  const emu = await createStandin();
  const hash = emu.stateHash();
  const register = await call(emu.scheduler, "PUT", "/v1/jobs", { Job: body });
  const validate = await call(emu.scheduler, "PUT", "/v1/validate/job", { Job: body });
  const plan = await call(emu.scheduler, "PUT", "/v1/job/j/plan", { Job: body });
  const action = await call(emu.scheduler, "POST", "/_standin/actions", { do: "job-register", job: body });
  const unchanged = emu.stateHash() === hash;
  const fixture = await createStandin({ fixture: { scheduler: { jobs: [body] } } as never }).then(
    () => "loaded",
    (error: Error) => error.message,
  );
  return { register, validate, plan, action, fixture, unchanged };
}

describe("the same invalid job everywhere", () => {
  it.each(INVALID)("%s", async (_name, body, message) => {
    const r = await everyEntryPoint(body);
    expect(r.register.status).toBe(500);
    expect(r.register.text).toContain(message);
    expect(r.register.text).toMatch(/^\d+ errors? occurred:\n\t\* /);
    expect(r.plan.status).toBe(500);
    expect(r.plan.text).toBe(r.register.text);
    expect(r.validate.status).toBe(200);
    expect(r.validate.body.Error).toBe(r.register.text);
    expect(r.validate.body.ValidationErrors.join("\n")).toContain(message);
    expect(r.action.status).toBe(400);
    expect(r.action.body.error).toBe(`job-register: ${r.register.text.trim()}`);
    expect(r.fixture).toBe(`scheduler.jobs[0]: ${r.register.text.trim()}`);
    expect(r.unchanged).toBe(true);
  });

  it.each(UNDECODABLE)("%s", async (_name, body, message) => {
    const r = await everyEntryPoint(body);
    for (const answer of [r.register, r.validate, r.plan]) {
      expect(answer.status).toBe(400);
      expect(answer.text).toBe(message);
    }
    expect(r.action.status).toBe(400);
    expect(r.action.body.error).toBe(`job-register: ${message}`);
    expect(r.fixture).toBe(`scheduler.jobs[0]: ${message}`);
    expect(r.unchanged).toBe(true);
  });

  it("a valid periodic job is accepted everywhere", async () => {
    const r = await everyEntryPoint(job((j) => (j.Periodic = { Spec: "*/5 * * * *", SpecType: "cron" })));
    expect([r.register.status, r.validate.status, r.plan.status, r.action.status]).toEqual([200, 200, 200, 200]);
    expect(r.validate.body.ValidationErrors).toBeNull();
    expect(r.fixture).toBe("loaded");
  });
});
