/**
 * GET /v1/client/fs/logs/:alloc through the HTTP surface: scripted task
 * output (fixture `scheduler.taskOutput`, the `task-output` and `task-log`
 * actions) appearing as the virtual clock passes its instants, Nomad's
 * framed JSON and plain text, offsets and origins, following until the task
 * is dead, errors and ACLs, snapshots and the state hash.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

function job(id: string, tasks: string[] = ["server"], extra: Json = {}): Json {
  return {
    ID: id,
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "web", Count: 1, Tasks: tasks.map((Name) => ({ Name, Driver: "docker", Config: { image: "nginx:1" }, Resources: { CPU: 100, MemoryMB: 64 } })) }],
    ...extra,
  };
}

const SCRIPT = {
  job: "web",
  task: "server",
  stdout: ["booting", { after: "2s", line: "listening on :8080" }, { after: "1m", line: "still here" }],
  stderr: [{ after: "1s", line: "warning: no config" }],
};

const MANAGEMENT = "99999999-9999-9999-9999-999999999999";

async function started(fixture: Json = {}, jobs: Json[] = [job("web")]): Promise<{ emu: Standin; alloc: string }> {
  const emu = await createStandin({ fixture: { scheduler: { jobs, taskOutput: [SCRIPT], ...fixture } } });
  emu.clock.advance("5s"); // placed at 100ms, started at 100ms + the client's startup
  const [stub] = (await (await emu.scheduler.request(`/v1/job/${jobs[0]!.ID}/allocations`, { headers: { "X-Nomad-Token": MANAGEMENT } })).json()) as Json[];
  expect(stub!.ClientStatus).toBe("running");
  return { emu, alloc: stub!.ID };
}

async function logs(emu: Standin, alloc: string, query: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?${query}`);
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

/** Back-to-back JSON frames as Nomad writes them (no separator). */
function frames(body: string): Json[] {
  return body === "" ? [] : JSON.parse(`[${body.replaceAll("}{", "},{")}]`);
}

const decoded = (list: Json[]) => list.map((f) => Buffer.from(f.Data ?? "", "base64").toString("utf8")).join("");

async function action(emu: Standin, body: Json): Promise<{ status: number; body: Json }> {
  const res = await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Json };
}

/** A followed stream's reader: each chunk as it arrives, decoded. */
class Follower {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();
  constructor(response: Response) {
    this.reader = response.body!.getReader();
  }
  async next(): Promise<string | undefined> {
    const { value, done } = await this.reader.read();
    return done ? undefined : this.decoder.decode(value);
  }
  async rest(): Promise<string> {
    let out = "";
    for (let chunk = await this.next(); chunk !== undefined; chunk = await this.next()) out += chunk;
    return out;
  }
}

describe("GET /v1/client/fs/logs/:alloc", () => {
  it("gives the lines written so far as framed JSON: Data base64, File, Offset at the data's end", async () => {
    const { emu, alloc } = await started();
    // At 5s the task has run a little under 5s: the start line, the 1s stderr line and the 2s stdout line.
    const out = await logs(emu, alloc, "task=server&type=stdout");
    expect(out.status).toBe(200);
    expect(out.type).toBe("application/json");
    expect(out.body).toBe(`{"Data":"${Buffer.from("booting\nlistening on :8080\n").toString("base64")}","File":"alloc/logs/server.stdout.0","Offset":27}`);
    expect(decoded(frames((await logs(emu, alloc, "task=server&type=stderr")).body))).toBe("warning: no config\n");

    emu.clock.advance("1m");
    expect(decoded(frames((await logs(emu, alloc, "task=server&type=stdout")).body))).toBe("booting\nlistening on :8080\nstill here\n");
  });

  it("plain=true sends the raw bytes under text/plain; offset and origin pick where to begin", async () => {
    const { emu, alloc } = await started();
    const plain = await logs(emu, alloc, "task=server&type=stdout&plain=true");
    expect(plain).toEqual({ status: 200, type: "text/plain", body: "booting\nlistening on :8080\n" });
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&offset=8")).body).toBe("listening on :8080\n");
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&origin=end&offset=6")).body).toBe(":8080\n");
    // Past either end: clamped, as findClosest does.
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&offset=999")).body).toBe("");
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&origin=end&offset=999")).body).toBe("booting\nlistening on :8080\n");
    // A negative offset counts the other way (findClosest): back from the end from the start, forward from the end.
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&offset=-6")).body).toBe(":8080\n");
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&origin=end&offset=-8")).body).toBe("listening on :8080\n");
    const framed = frames((await logs(emu, alloc, "task=server&type=stdout&offset=8")).body);
    expect(framed).toEqual([{ Data: Buffer.from("listening on :8080\n").toString("base64"), File: "alloc/logs/server.stdout.0", Offset: 27 }]);
  });

  it("an unscripted task writes one line on start to stdout and nothing to stderr", async () => {
    const { emu, alloc } = await started({}, [job("web", ["server", "sidecar"])]);
    expect((await logs(emu, alloc, "task=sidecar&type=stdout&plain=true")).body).toBe('standin: task "sidecar" started\n');
    const stderr = await logs(emu, alloc, "task=sidecar&type=stderr");
    expect(stderr).toEqual({ status: 200, type: "application/json", body: "" });
  });

  it("follow=true sends new lines as the clock passes their instants and as task-log appends them, heartbeats each second, and ends when the task is dead", async () => {
    const { emu, alloc } = await started();
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&follow=true`, { signal: controller.signal });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    const stream = new Follower(res);
    expect(frames((await stream.next())!)).toEqual([{ Data: Buffer.from("booting\nlistening on :8080\n").toString("base64"), File: "alloc/logs/server.stdout.0", Offset: 27 }]);

    const appended = await action(emu, { do: "task-log", job: "web", task: "server", lines: ["GET / 200"] });
    expect(appended.status).toBe(200);
    expect(appended.body.result).toEqual({ AllocID: alloc, Task: "server", Type: "stdout", Size: 37 });
    expect(frames((await stream.next())!)).toEqual([{ Data: Buffer.from("GET / 200\n").toString("base64"), File: "alloc/logs/server.stdout.0", Offset: 37 }]);

    emu.clock.advance("1s");
    expect(await stream.next()).toBe("{}"); // the framer's heartbeat

    emu.clock.advance("1m"); // heartbeats each second, and the 1m line when its instant comes
    const minute = frames(await readUntil(stream, "still here"));
    expect(minute.filter((f) => f.Data === undefined).every((f) => Object.keys(f).length === 0)).toBe(true);
    expect(decoded(minute)).toBe("still here\n");
    expect(minute.find((f) => f.Data)!.Offset).toBe(48);

    expect((await action(emu, { do: "alloc-complete", job: "web" })).status).toBe(200);
    expect(frames(await stream.rest()).every((f) => f.Data === undefined)).toBe(true);
  });

  it("plain follow sends bytes only (no heartbeats)", async () => {
    const { emu, alloc } = await started();
    const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&follow=true&plain=true&origin=end&offset=0`);
    expect(res.headers.get("content-type")).toBe("text/plain");
    const stream = new Follower(res);
    // origin=end with offset 0 opens the last log file at its start (findClosest's quirk): all of it.
    expect(await stream.next()).toBe("booting\nlistening on :8080\n");
    emu.clock.advance("3s");
    await action(emu, { do: "task-log", job: "web", task: "server", lines: ["one", "two\n"] });
    expect(await stream.next()).toBe("one\ntwo\n");
    await action(emu, { do: "job-stop", job: "web" });
    emu.clock.advance("10s");
    expect(await stream.rest()).toBe("");
  });

  it("a dead task's log stays readable; lines after its end are never written; follow on it ends at once", async () => {
    const { emu, alloc } = await started();
    await action(emu, { do: "alloc-fail", job: "web" });
    emu.clock.advance("5m");
    const out = await logs(emu, alloc, "task=server&type=stdout&plain=true");
    expect(out.body).toBe("booting\nlistening on :8080\n");
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true&follow=true")).body).toBe("booting\nlistening on :8080\n");
    const appended = await action(emu, { do: "task-log", alloc, task: "server", lines: ["late"] });
    expect(appended.status).toBe(409);
  });

  it("answers Nomad's errors: parameters (400), unknown allocation (404), unknown task (400)", async () => {
    const { emu, alloc } = await started();
    const cases: Array<[string, number, string]> = [
      [`${alloc}?type=stdout`, 400, "must provide task name"],
      [`${alloc}?task=server`, 400, "must provide log type (stdout/stderr)"],
      [`${alloc}?task=server&type=stdin`, 400, "must provide log type (stdout/stderr)"],
      [`${alloc}?task=server&type=stdout&origin=middle`, 400, "origin must be start or end"],
      [`${alloc}?task=server&type=stdout&follow=yes`, 400, 'failed to parse follow field to boolean: strconv.ParseBool: parsing "yes": invalid syntax'],
      [`${alloc}?task=server&type=stdout&plain=2`, 400, 'failed to parse plain field to boolean: strconv.ParseBool: parsing "2": invalid syntax'],
      [`${alloc}?task=server&type=stdout&offset=x`, 400, 'error parsing offset: strconv.ParseInt: parsing "x": invalid syntax'],
      [`?task=server&type=stdout`, 400, "must provide a valid alloc id"],
    ];
    for (const [query, status, body] of cases) {
      const res = await emu.scheduler.request(`/v1/client/fs/logs/${query}`);
      expect([res.status, await res.text()], query).toEqual([status, body]);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    }
    // Past the parameters the handler has set its Content-Type, and the stream's errors go out under it.
    expect(await logs(emu, "0b7f6f3a-0000-0000-0000-000000000000", "task=server&type=stdout")).toEqual({
      status: 404,
      type: "application/json",
      body: 'Unknown allocation "0b7f6f3a-0000-0000-0000-000000000000"',
    });
    expect(await logs(emu, alloc, "task=web&type=stdout&plain=true")).toEqual({ status: 400, type: "text/plain", body: 'unknown task name "web"' });
  });

  it("needs read-logs or read-fs in the allocation's namespace (else a 500 Permission denied, as the stream's uncoded error)", async () => {
    const policy = (name: string, caps: string[]) => ({ Name: name, Rules: JSON.stringify({ namespace: { default: { capabilities: caps } } }) });
    const { emu, alloc } = await started({
      acl: {
        enabled: true,
        policies: [policy("logs", ["read-logs"]), policy("fs", ["read-fs"]), policy("reader", ["read-job"])],
        tokens: [
          { AccessorID: "a1", SecretID: "11111111-1111-1111-1111-111111111111", Type: "client", Policies: ["logs"] },
          { AccessorID: "a2", SecretID: "22222222-2222-2222-2222-222222222222", Type: "client", Policies: ["fs"] },
          { AccessorID: "a3", SecretID: "33333333-3333-3333-3333-333333333333", Type: "client", Policies: ["reader"] },
          { AccessorID: "a9", SecretID: MANAGEMENT, Type: "management" },
        ],
      },
    });
    const as = async (secret: string | undefined) => {
      const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&plain=true`, { headers: secret ? { "X-Nomad-Token": secret } : {} });
      return [res.status, await res.text()];
    };
    expect(await as("11111111-1111-1111-1111-111111111111")).toEqual([200, "booting\nlistening on :8080\n"]);
    expect(await as("22222222-2222-2222-2222-222222222222")).toEqual([200, "booting\nlistening on :8080\n"]);
    expect(await as("33333333-3333-3333-3333-333333333333")).toEqual([500, "Permission denied"]);
    expect(await as(undefined)).toEqual([500, "Permission denied"]);
  });

  it("task-output sets a script for later allocations; group scripts win over the job's", async () => {
    const emu = await createStandin();
    const set = await action(emu, { do: "task-output", job: "api", task: "server", stdout: [{ after: "0s", line: "job-wide" }] });
    expect(set.status).toBe(200);
    expect(set.body.result).toEqual({ JobID: "api", Namespace: "default", Group: "", Task: "server", Stdout: 1, Stderr: 0 });
    await action(emu, { do: "task-output", job: "api", group: "web", task: "server", stderr: ["group's own"] });
    expect((await action(emu, { do: "task-output", job: "api", task: "server", stdout: [{ after: "soon", line: "x" }] })).status).toBe(400);
    await action(emu, { do: "job-register", job: job("api") });
    emu.clock.advance("5s");
    const [stub] = (await (await emu.scheduler.request("/v1/job/api/allocations")).json()) as Json[];
    expect((await logs(emu, stub!.ID, "task=server&type=stderr&plain=true")).body).toBe("group's own\n");
    expect((await logs(emu, stub!.ID, "task=server&type=stdout&plain=true")).body).toBe("");
  });

  it("rejects a fixture whose line is malformed, naming its path", async () => {
    await expect(createStandin({ fixture: { scheduler: { taskOutput: [{ job: "web", task: "server", stdout: [{ after: "1 second", line: "x" }] }] } } })).rejects.toThrow(
      /taskOutput/,
    );
    await expect(createStandin({ fixture: { scheduler: { taskOutput: [{ job: "web", stdout: ["x"] }] } } })).rejects.toThrow(/task/);
  });

  it("a timeline step runs task-log at its instant", async () => {
    const { emu, alloc } = await started({}, [job("web")]);
    const timed = await createStandin({
      fixture: {
        scheduler: { jobs: [job("web")], taskOutput: [SCRIPT] },
        timeline: [{ at: "30s", do: "task-log", job: "web", task: "server", type: "stderr", lines: ["from the timeline"] }],
      },
    });
    timed.clock.advance("29s");
    const [stub] = (await (await timed.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    expect((await logs(timed, stub!.ID, "task=server&type=stderr&plain=true")).body).toBe("warning: no config\n");
    timed.clock.advance("1s");
    expect((await logs(timed, stub!.ID, "task=server&type=stderr&plain=true")).body).toBe("warning: no config\nfrom the timeline\n");
    // Without the step, the same run has only the script's line.
    emu.clock.advance("25s");
    expect((await logs(emu, alloc, "task=server&type=stderr&plain=true")).body).toBe("warning: no config\n");
  });

  it("a script changed under a followed log truncates it: the next frame carries FileEvent and starts again at 0", async () => {
    const { emu, alloc } = await started();
    const stream = new Follower(await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&follow=true`));
    expect(frames((await stream.next())!)[0].Offset).toBe(27);
    await action(emu, { do: "task-output", job: "web", task: "server", stdout: ["v2"] });
    expect(frames((await stream.next())!)).toEqual([{ Data: Buffer.from("v2\n").toString("base64"), File: "alloc/logs/server.stdout.0", FileEvent: "file truncated", Offset: 3 }]);
  });

  it("a restore ends open log streams", async () => {
    const { emu, alloc } = await started();
    const snapshot = emu.snapshot();
    const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&follow=true&plain=true`);
    const stream = new Follower(res);
    expect(await stream.next()).toBe("booting\nlistening on :8080\n");
    emu.restore(snapshot);
    expect(await stream.rest()).toBe("");
  });

  it("lives in the state: appended lines change the hash, and a restored snapshot gives the same log", async () => {
    const { emu, alloc } = await started();
    const before = emu.stateHash();
    const snapshot = emu.snapshot();
    await action(emu, { do: "task-log", alloc, task: "server", type: "stderr", lines: ["boom"] });
    expect(emu.stateHash()).not.toBe(before);
    const after = (await logs(emu, alloc, "task=server&type=stderr&plain=true")).body;
    expect(after).toBe("warning: no config\nboom\n");
    const saved = emu.snapshot();
    emu.restore(snapshot);
    expect(emu.stateHash()).toBe(before);
    expect((await logs(emu, alloc, "task=server&type=stderr&plain=true")).body).toBe("warning: no config\n");
    emu.restore(saved);
    expect((await logs(emu, alloc, "task=server&type=stderr&plain=true")).body).toBe(after);
  });
});

/** Reads chunks until the decoded frames contain `text`. */
async function readUntil(stream: Follower, text: string): Promise<string> {
  let body = "";
  for (let chunk = await stream.next(); chunk !== undefined; chunk = await stream.next()) {
    body += chunk;
    if (decoded(frames(body)).includes(text)) return body;
  }
  throw new Error(`stream ended before ${text}`);
}

describe("logs rotate as Nomad's logmon rotates them (max_files × max_file_size)", () => {
  const MiB = 1024 * 1024;
  /** A task whose `logs` block keeps 2 files of 1 MiB. */
  const rotating = () => {
    const j = job("web");
    j.TaskGroups[0].Tasks[0].LogConfig = { MaxFiles: 2, MaxFileSizeMB: 1 };
    return j;
  };
  /** 600 lines of 999 bytes and a newline: about 0.57 MiB. */
  const batch = (tag: string) => Array.from({ length: 600 }, (_, i) => `${tag}-${String(i).padStart(4, "0")}-${"x".repeat(990 - tag.length)}`);

  async function listing(emu: Standin, alloc: string): Promise<Json[]> {
    const res = await emu.scheduler.request(`/v1/client/fs/ls/${alloc}?path=/alloc/logs`);
    expect(res.status).toBe(200);
    return ((await res.json()) as Json[]).filter((f) => String(f.Name).startsWith("server.stdout."));
  }

  it("writes <task>.stdout.0, .1, … keeping lines whole, and keeps only the newest max_files", async () => {
    const { emu, alloc } = await started({}, [rotating()]);
    for (const tag of ["a", "b", "c"]) expect((await action(emu, { do: "task-log", job: "web", task: "server", lines: batch(tag) })).status).toBe(200);
    // 1.7 MiB written: file 0 is full (no line split across files), file 1 takes the rest.
    let files = await listing(emu, alloc);
    expect(files.map((f) => f.Name)).toEqual(["server.stdout.0", "server.stdout.1"]);
    expect(files[0]!.Size).toBeLessThanOrEqual(MiB);
    expect(files[0]!.Size).toBeGreaterThan(MiB - 1000);
    const first = await emu.scheduler.request(`/v1/client/fs/cat/${alloc}?path=/alloc/logs/server.stdout.0`);
    expect((await first.text()).endsWith("\n")).toBe(true);
    for (const tag of ["d", "e", "f", "g"]) expect((await action(emu, { do: "task-log", job: "web", task: "server", lines: batch(tag) })).status).toBe(200);
    // 4 MiB written: files 0 to 3, the oldest two purged.
    files = await listing(emu, alloc);
    expect(files.map((f) => f.Name)).toEqual(["server.stdout.2", "server.stdout.3"]);
    const kept = files.reduce((sum, f) => sum + Number(f.Size), 0);
    expect(kept).toBeLessThanOrEqual(2 * MiB);
    const gone = await emu.scheduler.request(`/v1/client/fs/stat/${alloc}?path=/alloc/logs/server.stdout.0`);
    expect(gone.status).toBe(404);
    // The logs endpoint reads the kept files end to end, from a whole line to the last one written.
    const plain = (await logs(emu, alloc, "task=server&type=stdout&plain=true")).body;
    expect(Buffer.byteLength(plain)).toBe(kept);
    expect(plain.endsWith(`${batch("g").at(-1)}\n`)).toBe(true);
    expect(plain.split("\n")[0]).toMatch(/^[a-g]-\d{4}-x+$/);
  });

  it("stores no more than max_files × max_file_size of appended lines, however many are written", async () => {
    const { emu } = await started({}, [rotating()]);
    let size = 0;
    for (let i = 0; i < 12; i++) {
      const res = await action(emu, { do: "task-log", job: "web", task: "server", lines: batch(`n${i}`) });
      expect(res.status).toBe(200);
      size = res.body.result.Size;
      expect(size).toBeLessThanOrEqual(2 * MiB);
    }
    expect(size).toBeGreaterThan(MiB);
    // The snapshot (the store's rows) holds the kept window, not the 6.8 MiB written.
    const snapshot = await emu.scheduler.request("/_standin/snapshot");
    expect(snapshot.status).toBe(200);
    const stored = (await snapshot.text()).length;
    expect(stored).toBeGreaterThan(MiB);
    expect(stored).toBeLessThan(4 * MiB);
  });

  it("a scripted line longer than a whole file fills it and runs on into the next (it used to roll files forever)", async () => {
    const long = "L".repeat(Math.floor(1.5 * MiB));
    const j = rotating();
    const emu = await createStandin({ fixture: { scheduler: { jobs: [j], taskOutput: [{ job: "web", task: "server", stdout: [long] }] } } });
    emu.clock.advance("5s");
    const [stub] = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    const files = await listing(emu, stub!.ID);
    expect(files.map((f) => [f.Name, f.Size])).toEqual([
      ["server.stdout.0", MiB],
      ["server.stdout.1", long.length + 1 - MiB],
    ]);
    expect(Buffer.byteLength((await logs(emu, stub!.ID, "task=server&type=stdout&plain=true")).body)).toBe(long.length + 1);
  });

  it("refuses a task-log action of more than 1 MiB and appends nothing", async () => {
    const { emu, alloc } = await started({}, [rotating()]);
    const before = (await logs(emu, alloc, "task=server&type=stdout&plain=true")).body;
    const tooMuch = Array.from({ length: 1100 }, () => "y".repeat(999));
    const refused = await action(emu, { do: "task-log", job: "web", task: "server", lines: tooMuch });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("more than one task-log action appends (1048576)");
    expect((await logs(emu, alloc, "task=server&type=stdout&plain=true")).body).toBe(before);
  });
});

describe("followed logs cost what the client reads", () => {
  it("a follower of a 7 MB log from the start gets every byte (frames are made as it reads, not all at once)", async () => {
    const { emu, alloc } = await started();
    const line = "z".repeat(999);
    for (let i = 0; i < 7; i++) expect((await action(emu, { do: "task-log", job: "web", task: "server", lines: Array.from({ length: 1000 }, () => line) })).status).toBe(200);
    const total = Buffer.byteLength((await logs(emu, alloc, "task=server&type=stdout&plain=true")).body);
    expect(total).toBeGreaterThan(7_000_000);
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stdout&follow=true`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = 0;
    let pending = "";
    while (received < total) {
      const { value, done } = await reader.read();
      expect(done).toBe(false);
      pending += decoder.decode(value, { stream: true });
      // Whole frames only (a chunk is one frame here, but do not rely on it).
      for (;;) {
        const end = pending.indexOf("}");
        if (end === -1) break;
        const f = JSON.parse(pending.slice(0, end + 1));
        pending = pending.slice(end + 1);
        received += Buffer.from(f.Data ?? "", "base64").length;
      }
    }
    expect(received).toBe(total);
    controller.abort();
  });

  it("a stuck follower's heartbeats stop piling up while the clock moves days, and resume once it reads", async () => {
    const { HEARTBEAT_SLACK_BYTES } = await import("../../src/scheduler/events/events.js");
    const { emu, alloc } = await started();
    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/client/fs/logs/${alloc}?task=server&type=stderr&follow=true`, { signal: controller.signal });
    const stream = new Follower(res);
    expect(await stream.next()).toContain('"Data"'); // the stderr line written so far
    emu.clock.advance("168h"); // 604,800 heartbeats at one a second if nothing held them back
    const beats = Math.floor(HEARTBEAT_SLACK_BYTES / 2) + 1; // "{}" each, until past the slack
    for (let i = 0; i < beats; i++) expect(await stream.next()).toBe("{}");
    emu.clock.advance("1s");
    expect(await stream.next()).toBe("{}");
    controller.abort();
    expect(await stream.rest()).toBe("");
  });
});

describe("rotate (logmon's FileRotator over the lines a task wrote)", () => {
  it("starts the next file rather than split a line, splits one longer than the 32 KiB scan limit, keeps the newest max_files", async () => {
    const { rotate } = await import("../../src/scheduler/state/task-logs.js");
    const size = 64 * 1024;
    const line = (n: number, c = "a") => ({ at: n, text: `${c.repeat(n - 1)}\n` });
    // 40 KiB + 30 KiB: the second does not fit in the first file's remaining 24 KiB, so it opens file 1 whole.
    let files = rotate([line(40 * 1024), line(30 * 1024, "b")], { maxFiles: 5, maxFileSize: size }, 0, 0);
    expect(files.map((f) => [f.index, f.content.length])).toEqual([
      [0, 40 * 1024],
      [1, 30 * 1024],
    ]);
    // A 100 KiB line has no newline within reach of the scan limit: it fills file 0 and runs on into file 1.
    files = rotate([line(100 * 1024)], { maxFiles: 5, maxFileSize: size }, 0, 0);
    expect(files.map((f) => [f.index, f.content.length])).toEqual([
      [0, size],
      [1, 100 * 1024 - size],
    ]);
    // Ten files written, two kept; dropped bytes move the rotation on as whole files would.
    const many = Array.from({ length: 10 }, (_, i) => line(size, String(i)));
    expect(rotate(many, { maxFiles: 2, maxFileSize: size }, 0, 0).map((f) => f.index)).toEqual([8, 9]);
    expect(rotate(many.slice(5), { maxFiles: 2, maxFileSize: size }, 5 * size, 0).map((f) => f.index)).toEqual([8, 9]);
  });
});
