/**
 * An action's arguments are bounded: 10 000 JSON values and 2 Mi characters
 * of strings, through POST /_standin/actions,
 * `emu.act` and a fixture's timeline alike; past either, a 400 naming the
 * limit, before the arguments are checked or copied, and nothing changes.
 * Counts at the edge (N accepted, N+1 refused), never a time.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { ACTION_ARGUMENT_CHARS, ACTION_ARGUMENT_VALUES, ACTION_BODY_BYTES } from "../../src/http/actions.js";
import { call } from "../support/call.js";

let emu: Standin | undefined;
afterEach(() => {
  emu?.close();
  emu = undefined;
});

const actions = (body: unknown) => call(emu!.scheduler, "POST", "/_standin/actions", body);

/** task-output arguments of exactly `values` JSON values: the object, its three members, and `lines` of the list. */
const taskOutput = (values: number) => ({ job: "web", task: "t", stdout: Array.from({ length: values - 4 }, () => "") });

const TOO_MANY = `arguments too large: more than ${ACTION_ARGUMENT_VALUES} JSON values`;
const TOO_LONG = `arguments too large: more than ${ACTION_ARGUMENT_CHARS} characters of strings`;

describe("an action's arguments", () => {
  it("take 10 000 JSON values, not one more, and a refused one changes nothing", async () => {
    emu = await createStandin({});
    const [index, hash, tape] = [emu.index, emu.stateHash(), emu.tape.length];
    const refused = await actions({ do: "task-output", ...taskOutput(ACTION_ARGUMENT_VALUES + 1) });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(`action (task-output): ${TOO_MANY} (standin's limit for an action's arguments)`);
    expect([emu.index, emu.stateHash(), emu.tape.length]).toEqual([index, hash, tape]);
    // `do` is not an argument: the same arguments at the limit are taken.
    const taken = await actions({ do: "task-output", ...taskOutput(ACTION_ARGUMENT_VALUES) });
    expect(taken).toMatchObject({ status: 200, body: { result: { Stdout: ACTION_ARGUMENT_VALUES - 4 } } });
    // In process, the same edge.
    expect(() => emu!.act("task-output", taskOutput(ACTION_ARGUMENT_VALUES + 1))).toThrow(TOO_MANY);
    expect(emu.act("task-output", taskOutput(ACTION_ARGUMENT_VALUES))).toMatchObject({ result: { Stdout: ACTION_ARGUMENT_VALUES - 4 } });
  });

  it("are bounded before they are checked: 20 000 unknown keys get the size error, not a listing of keys", async () => {
    emu = await createStandin({});
    const body: Record<string, unknown> = { do: "node-down", node: "standin" };
    for (let i = 0; i < 20_000; i++) body[`k${i}`] = 0;
    const refused = await actions(body);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toContain(TOO_MANY);
    // Nested values count too: a job of 10 000 Meta keys is more than its arguments may hold.
    const meta = Object.fromEntries(Array.from({ length: ACTION_ARGUMENT_VALUES }, (_, i) => [`m${i}`, "v"]));
    const job = { ID: "big", Type: "batch", Datacenters: ["dc1"], Meta: meta, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec" }] }] };
    // Refused by a walk that stops at the limit (a large body parsed in the worker), before the action's schema lists anything.
    expect((await actions({ do: "job-register", job })).body.error).toBe(`action (job-register): ${TOO_MANY} (standin's limit for an action's arguments)`);
    expect((await call(emu.scheduler, "GET", "/v1/job/big")).status).toBe(404);
  });

  it("take 2 Mi characters of strings, keys included, not one more", async () => {
    emu = await createStandin({});
    // `node` is 4 characters: a name of the rest is at the limit (and names no node), one more is past it.
    const atLimit = await actions({ do: "node-down", node: "n".repeat(ACTION_ARGUMENT_CHARS - 4) });
    expect(atLimit.status).toBe(404);
    const past = await actions({ do: "node-down", node: "n".repeat(ACTION_ARGUMENT_CHARS - 3) });
    expect(past.status).toBe(400);
    expect(past.body.error).toBe(`action (node-down): ${TOO_LONG} (standin's limit for an action's arguments)`);
  });

  it("come in a body of at most 16 MiB: 413 before it is read", async () => {
    emu = await createStandin({});
    const body = JSON.stringify({ do: "node-down", node: "" });
    const padded = `${body.slice(0, -1)}${" ".repeat(ACTION_BODY_BYTES - body.length + 1)}}`;
    expect(Buffer.byteLength(padded)).toBe(ACTION_BODY_BYTES + 1);
    const refused = await call(emu.scheduler, "POST", "/_standin/actions", padded);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toBe(`request body too large: POST /_standin/actions takes at most ${ACTION_BODY_BYTES} bytes`);
    // One byte less is read and handled (an empty name is a bad argument).
    expect((await call(emu.scheduler, "POST", "/_standin/actions", padded.replace("  }", " }"))).status).toBe(400);
  });

  it("in a fixture's timeline are bounded the same way, and the timeline schedules nothing", async () => {
    emu = await createStandin({});
    const timers = (await call(emu.scheduler, "GET", "/_standin/clock")).body.pendingTimers;
    const fixture = { timeline: [{ at: "1s", do: "task-output", ...taskOutput(ACTION_ARGUMENT_VALUES + 1) }] };
    const refused = await call(emu.scheduler, "POST", "/_standin/fixtures", fixture);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain(TOO_MANY);
    expect((await call(emu.scheduler, "GET", "/_standin/clock")).body.pendingTimers).toBe(timers);
  });
});
