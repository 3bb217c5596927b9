/**
 * Filters see Nomad's Go types: uint64 fields (indexes, versions) coerce a
 * literal with strconv.ParseUint (so `-1` is an error and the max uint64 a
 * valid value); int64 nanosecond times compare exactly; numbers in a task's
 * free-form Config were decoded as float64, so `"8080.0"` equals 8080.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";

let emu: Standin;

beforeAll(async () => {
  // 2023-11-14T22:13:20.001Z: SubmitTime 1700000000001000000 ns, past 2^53.
  emu = await createStandin({ fixture: { clock: { start: "2023-11-14T22:13:20.001Z" } } as never });
  const job = {
    ID: "web",
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "nginx", port: 8080, ratio: 0.5 } }] }],
  };
  expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
});

const jobs = async (filter: string) => call(emu.scheduler, "GET", `/v1/jobs?filter=${encodeURIComponent(filter)}`);
const ids = async (filter: string) => {
  const res = await jobs(filter);
  expect(res.status, res.text).toBe(200);
  return (res.body as { ID: string }[]).map((j) => j.ID);
};

describe("integer fields by Go type", () => {
  it("an int64 nanosecond time compares exactly, past 2^53", async () => {
    expect(await ids("SubmitTime == 1700000000001000000")).toEqual(["web"]);
    expect(await ids("SubmitTime == 1700000000001000001")).toEqual([]);
  });

  it.each([
    ["Version == -1", 'strconv.ParseUint: parsing "-1": invalid syntax'],
    ["Version == 1.5", 'strconv.ParseUint: parsing "1.5": invalid syntax'],
    ["ModifyIndex == 18446744073709551616", 'strconv.ParseUint: parsing "18446744073709551616": value out of range'],
    ["Priority == 18446744073709551615", 'strconv.ParseInt: parsing "18446744073709551615": value out of range'],
  ])("%s is a 400 with Go's error", async (filter, message) => {
    const res = await jobs(filter);
    expect(res.status).toBe(400);
    expect(res.text).toBe(`failed to read result page: error getting match value in expression: ${message}`);
  });

  it("the max uint64 is a valid literal on a uint64 field; a negative one is valid on a signed field", async () => {
    expect(await ids("Version == 18446744073709551615")).toEqual([]);
    expect(await ids("Version == 0")).toEqual(["web"]);
    expect(await ids("Priority == -1")).toEqual([]);
  });
});

describe("a task's free-form Config", () => {
  it("holds float64 numbers, as Nomad decodes them", async () => {
    expect(await ids('TaskGroups.0.Tasks.0.Config.port == "8080.0"')).toEqual(["web"]);
    expect(await ids("TaskGroups.0.Tasks.0.Config.port == 8080")).toEqual(["web"]);
    expect(await ids("TaskGroups.0.Tasks.0.Config.ratio == 0.5")).toEqual(["web"]);
  });
});

describe("nil struct pointers (ParameterizedJob, Periodic, …)", () => {
  it("in/contains on one is go-bexpr's error for an invalid value", async () => {
    const res = await jobs('"x" in ParameterizedJob');
    expect(res.status).toBe(400);
    expect(res.text).toBe('failed to read result page: Cannot perform in/contains operations on type invalid for selector: "ParameterizedJob"');
    expect((await jobs('Periodic contains "x"')).status).toBe(400);
  });

  it("is empty and any/all, where go-bexpr panics, are a 400 that says so", async () => {
    const empty = await jobs("ParameterizedJob is empty");
    expect(empty.status).toBe(400);
    expect(empty.text).toBe('failed to read result page: is empty over "ParameterizedJob", a nil struct pointer: go-bexpr panics on it (Nomad fails the request)');
    expect((await jobs("Periodic is not empty")).status).toBe(400);
    expect((await jobs('any Periodic as p { p == "x" }')).text).toContain("a nil struct pointer: go-bexpr panics on it");
  });

  it("a nil slice or map is still just empty", async () => {
    expect(await ids("Meta is empty")).toEqual(["web"]);
    expect(await ids('"x" in Meta')).toEqual([]);
    expect(await ids("Datacenters is not empty")).toEqual(["web"]);
  });
});

describe("allocation maps by task name", () => {
  it("AllocatedResources.Tasks and TaskLifecycles are maps keyed by task, as in Nomad", async () => {
    const local = await createStandin();
    const job = {
      ID: "w",
      Type: "service",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "main", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 250, MemoryMB: 128 } }] }],
    };
    expect((await call(local.scheduler, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
    local.clock.advance("1m");
    const allocs = async (filter: string) => {
      const res = await call(local.scheduler, "GET", `/v1/allocations?filter=${encodeURIComponent(filter)}`);
      expect(res.status, res.text).toBe(200);
      return (res.body as unknown[]).length;
    };
    expect(await allocs('"main" in AllocatedResources.Tasks')).toBe(1);
    expect(await allocs('"other" in AllocatedResources.Tasks')).toBe(0);
    expect(await allocs("AllocatedResources.Tasks.main.Cpu.CpuShares == 250")).toBe(1);
    expect(await allocs('"main" in AllocatedResources.TaskLifecycles')).toBe(1);
  });
});

describe("a []byte Payload", () => {
  it("is bytes to the filter: length, byte membership, regexp over the bytes, no equality", async () => {
    const local = await createStandin();
    const job = {
      ID: "report",
      Type: "batch",
      Datacenters: ["dc1"],
      ParameterizedJob: { Payload: "optional" },
      TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "x" } }] }],
    };
    expect((await call(local.scheduler, "PUT", "/v1/jobs", { Job: job })).status).toBe(200);
    const dispatched = await call(local.scheduler, "PUT", "/v1/job/report/dispatch", { Payload: Buffer.from("hello").toString("base64") });
    expect(dispatched.status, dispatched.text).toBe(200);
    const children = async (filter: string) => call(local.scheduler, "GET", `/v1/jobs?prefix=report/&filter=${encodeURIComponent(filter)}`);
    expect(((await children("Payload is not empty")).body as unknown[]).length).toBe(1);
    expect(((await children("104 in Payload")).body as unknown[]).length).toBe(1); // 'h'
    expect(((await children("7 in Payload")).body as unknown[]).length).toBe(0);
    expect(((await children('Payload matches "^hel+o$"')).body as unknown[]).length).toBe(1);
    const equal = await children('Payload == "hello"');
    expect(equal.status).toBe(400);
    expect(equal.text).toBe("failed to read result page: unable to find suitable primitive comparison function for matching");
    const notByte = await children('"h" in Payload');
    expect(notByte.status).toBe(400);
    expect(notByte.text).toBe('failed to read result page: error getting match value in expression: strconv.ParseUint: parsing "h": invalid syntax');
  });
});

describe("Go's type names in errors", () => {
  it.each([
    ['TaskGroups matches "x"', "failed to read result page: Value of type []*structs.TaskGroup is not convertible to []byte"],
    ['Datacenters matches "x"', "failed to read result page: Value of type []string is not convertible to []byte"],
    ['Version matches "x"', "failed to read result page: Value of type uint64 is not convertible to []byte"],
    ['SubmitTime matches "x"', "failed to read result page: Value of type int64 is not convertible to []byte"],
    ["1 in Version", 'failed to read result page: Cannot perform in/contains operations on type uint64 for selector: "Version"'],
    ["1 in SubmitTime", 'failed to read result page: Cannot perform in/contains operations on type int64 for selector: "SubmitTime"'],
  ])("%s", async (filter, text) => {
    const res = await jobs(filter);
    expect(res.status).toBe(400);
    expect(res.text).toBe(text);
  });
});
