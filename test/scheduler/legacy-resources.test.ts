/**
 * The pre-0.9 resource blocks Nomad still writes in full (structs.Resources has
 * no struct-level omitempty): a node's `Resources` and `Reserved`, an
 * allocation's `Resources`, with every key, and the node's `CgroupParent`.
 * Found by the wire-shape oracle (test/conformance/oracle-wire.test.ts); this
 * keeps the fix under the unit suite, which runs without Go.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { smallJob } from "../support/jobs.js";

const RESOURCES_KEYS = ["CPU", "Cores", "MemoryMB", "MemoryMaxMB", "DiskMB", "IOPS", "Networks", "Devices", "NUMA", "SecretsMB"];

describe("legacy resources on the wire", () => {
  it("a node sends CgroupParent, Resources and a zero Reserved with every key", async () => {
    const emu = await createStandin();
    const [stub] = (await call(emu.scheduler, "GET", "/v1/nodes")).body;
    const node = (await call(emu.scheduler, "GET", `/v1/node/${stub.ID}`)).body;
    expect(node.CgroupParent).toBe("nomad.slice");
    expect(Object.keys(node.Resources).sort()).toEqual([...RESOURCES_KEYS].sort());
    expect(node.Reserved).toEqual({ CPU: 0, Cores: 0, MemoryMB: 0, MemoryMaxMB: 0, DiskMB: 0, IOPS: 0, Networks: null, Devices: null, NUMA: null, SecretsMB: 0 });
  });

  it("an allocation's Resources has every key, its ask in CPU and MemoryMB", async () => {
    const emu = await createStandin();
    expect((await call(emu.scheduler, "PUT", "/v1/jobs", { Job: smallJob("small") })).status).toBe(200);
    emu.clock.advance("10s");
    const [stub] = (await call(emu.scheduler, "GET", "/v1/job/small/allocations")).body;
    const alloc = (await call(emu.scheduler, "GET", `/v1/allocation/${stub.ID}`)).body;
    expect(Object.keys(alloc.Resources).sort()).toEqual([...RESOURCES_KEYS].sort());
    expect(alloc.Resources).toMatchObject({ CPU: 10, MemoryMB: 10, Cores: 0, SecretsMB: 0 });
  });
});
