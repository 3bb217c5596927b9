/**
 * The client file system endpoints (`/v1/client/fs/ls|stat|cat|readat|stream`)
 * over the virtual allocation directory: its layout, template files,
 * AllocFileInfo's shape, Nomad's errors and the read-fs capability.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";

type Json = Record<string, any>;

const MANAGEMENT = "99999999-9999-9999-9999-999999999999";

function job(): Json {
  const templates = [
    { DestPath: "local/app.conf", EmbeddedTmpl: "port = 8080\n" },
    { DestPath: "${NOMAD_SECRETS_DIR}/token", EmbeddedTmpl: "s3cr3t", Perms: "0600" },
    { DestPath: "${NOMAD_ALLOC_DIR}/data/shared.json", EmbeddedTmpl: '{"a":1}' },
    { DestPath: "../../../etc/passwd", EmbeddedTmpl: "never" },
  ];
  return {
    ID: "web",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1" }, Templates: templates }] }],
  };
}

async function started(fixture: Json = {}): Promise<{ emu: Standin; alloc: string }> {
  const emu = await createStandin({
    fixture: { scheduler: { jobs: [job()], taskOutput: [{ job: "web", task: "server", stdout: ["hello", { after: "1m", line: "later" }] }], ...fixture } },
  });
  emu.clock.advance("5s");
  const [stub] = (await (await emu.scheduler.request("/v1/job/web/allocations", { headers: { "X-Nomad-Token": MANAGEMENT } })).json()) as Json[];
  return { emu, alloc: stub!.ID };
}

async function get(emu: Standin, path: string, token?: string): Promise<{ status: number; type: string | null; body: string }> {
  const res = await emu.scheduler.request(`/v1/client/fs/${path}`, { headers: token ? { "X-Nomad-Token": token } : {} });
  return { status: res.status, type: res.headers.get("content-type"), body: await res.text() };
}

const names = (body: string) => (JSON.parse(body) as Json[]).map((f) => f.Name);

describe("the allocation directory", () => {
  it("ls lists a directory sorted by name, each entry an AllocFileInfo without ContentType", async () => {
    const { emu, alloc } = await started();
    const root = await get(emu, `ls/${alloc}`);
    expect(root.status).toBe(200);
    expect(JSON.parse(root.body)).toEqual([
      { FileMode: "drwxrwxrwx", IsDir: true, ModTime: "2026-01-01T00:00:00.1Z", Name: "alloc", Size: 4096 },
      { FileMode: "drwxrwxrwx", IsDir: true, ModTime: "2026-01-01T00:00:00.1Z", Name: "server", Size: 4096 },
    ]);
    expect(names((await get(emu, `ls/${alloc}?path=/alloc`)).body)).toEqual(["data", "logs", "tmp"]);
    expect(names((await get(emu, `ls/${alloc}?path=alloc/logs`)).body)).toEqual(["server.stderr.0", "server.stdout.0"]);
    expect(names((await get(emu, `ls/${alloc}?path=server`)).body)).toEqual(["local", "private", "secrets", "tmp"]);
    // Templates land where their destination says, relative to the task's directory; one leaving the allocation is not written.
    expect(names((await get(emu, `ls/${alloc}?path=server/local`)).body)).toEqual(["app.conf"]);
    expect(JSON.parse((await get(emu, `ls/${alloc}?path=server/secrets`)).body)).toEqual([
      { FileMode: "-rw-------", IsDir: false, ModTime: "2026-01-01T00:00:00.1Z", Name: "token", Size: 6 },
    ]);
    expect(names((await get(emu, `ls/${alloc}?path=alloc/data`)).body)).toEqual(["shared.json"]);
  });

  it("stat gives one AllocFileInfo with ContentType; log files grow with the task's output", async () => {
    const { emu, alloc } = await started();
    const conf = await get(emu, `stat/${alloc}?path=server/local/app.conf`);
    expect(conf.body).toBe('{"ContentType":"text/plain; charset=utf-8","FileMode":"-rw-r--r--","IsDir":false,"ModTime":"2026-01-01T00:00:00.1Z","Name":"app.conf","Size":12}');
    expect(JSON.parse((await get(emu, `stat/${alloc}?path=alloc/data/shared.json`)).body).ContentType).toBe("application/json");
    expect(JSON.parse((await get(emu, `stat/${alloc}?path=alloc`)).body)).toMatchObject({ ContentType: "application/octet-stream", IsDir: true, Size: 4096 });
    // An empty file: the client's read finds nothing to sniff.
    expect(JSON.parse((await get(emu, `stat/${alloc}?path=alloc/logs/server.stderr.0`)).body)).toMatchObject({ ContentType: "application/octet-stream", Size: 0 });
    const before = JSON.parse((await get(emu, `stat/${alloc}?path=alloc/logs/server.stdout.0`)).body);
    expect(before.Size).toBe(6);
    emu.clock.advance("10s");
    await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify({ do: "task-log", alloc, task: "server", lines: ["more"] }) });
    const after = JSON.parse((await get(emu, `stat/${alloc}?path=alloc/logs/server.stdout.0`)).body);
    expect(after.Size).toBe(11);
    expect(after.ModTime).toBe("2026-01-01T00:00:15Z");
  });

  it("cat gives a file's bytes; readat from an offset, at most limit", async () => {
    const { emu, alloc } = await started();
    expect(await get(emu, `cat/${alloc}?path=server/local/app.conf`)).toEqual({ status: 200, type: "text/plain; charset=utf-8", body: "port = 8080\n" });
    expect((await get(emu, `cat/${alloc}?path=/alloc/logs/server.stdout.0`)).body).toBe("hello\n");
    expect((await get(emu, `readat/${alloc}?path=server/local/app.conf&offset=7`)).body).toBe("8080\n");
    expect((await get(emu, `readat/${alloc}?path=server/local/app.conf&offset=0&limit=4`)).body).toBe("port");
  });

  it("stream sends frames of a file, following it by default", async () => {
    const { emu, alloc } = await started();
    const once = await get(emu, `stream/${alloc}?path=alloc/logs/server.stdout.0&follow=false`);
    expect(once.body).toBe(`{"Data":"${Buffer.from("hello\n").toString("base64")}","File":"alloc/logs/server.stdout.0","Offset":6}`);
    const fromEnd = await get(emu, `stream/${alloc}?path=server/local/app.conf&follow=false&origin=end&offset=5`);
    expect(fromEnd.body).toBe(`{"Data":"${Buffer.from("8080\n").toString("base64")}","File":"server/local/app.conf","Offset":12}`);

    const controller = new AbortController();
    const res = await emu.scheduler.request(`/v1/client/fs/stream/${alloc}?path=alloc/logs/server.stdout.0`, { signal: controller.signal });
    const reader = res.body!.getReader();
    const text = async () => new TextDecoder().decode((await reader.read()).value);
    expect(await text()).toContain('"Offset":6');
    await emu.scheduler.request("/_standin/actions", { method: "POST", body: JSON.stringify({ do: "task-log", alloc, task: "server", lines: ["again"] }) });
    expect(await text()).toBe(`{"Data":"${Buffer.from("again\n").toString("base64")}","File":"alloc/logs/server.stdout.0","Offset":12}`);
    emu.clock.advance("1s");
    expect(await text()).toBe("{}");
    // A scripted line comes when the clock passes its instant, heartbeats on the way.
    emu.clock.advance("1m");
    let body = "";
    while (!body.includes("Offset")) body += await text();
    expect(body.replaceAll("{}", "")).toBe(`{"Data":"${Buffer.from("later\n").toString("base64")}","File":"alloc/logs/server.stdout.0","Offset":18}`);
    controller.abort();
  });

  it("answers Nomad's errors for each route", async () => {
    const { emu, alloc } = await started();
    const abs = `/opt/nomad/data/alloc/${alloc}`;
    const cases: Array<[string, number, string]> = [
      [`ls/${alloc}?path=nope`, 404, `open ${abs}/nope: no such file or directory`],
      [`ls/${alloc}?path=server/local/app.conf`, 500, `readdirent ${abs}/server/local/app.conf: not a directory`],
      [`ls/${alloc}?path=../..`, 500, "Path escapes the alloc directory"],
      [`ls/`, 400, "must provide a valid alloc id"],
      [`ls/unknown-alloc`, 404, 'Unknown allocation "unknown-alloc"'],
      [`stat/${alloc}`, 400, "must provide a file name"],
      [`stat/${alloc}?path=server/nope`, 404, `stat ${abs}/server/nope: no such file or directory`],
      [`cat/${alloc}?path=server/nope`, 400, `stat ${abs}/server/nope: no such file or directory`],
      [`cat/${alloc}?path=server/local`, 400, 'file "server/local" is a directory'],
      [`cat/${alloc}?path=server/secrets/token`, 500, "Reading secret file prohibited: server/secrets/token"],
      [`cat/${alloc}?path=/../x`, 500, "Path escapes the alloc directory"],
      [`readat/${alloc}?path=server/local/app.conf`, 500, 'error parsing offset: strconv.ParseInt: parsing "": invalid syntax'],
      [`readat/${alloc}?path=server/local/app.conf&offset=0&limit=z`, 500, 'error parsing limit: strconv.ParseInt: parsing "z": invalid syntax'],
      [`stream/${alloc}?path=a&origin=top`, 400, "origin must be start or end"],
      [`exec/${alloc}`, 404, "Invalid method"],
      [`ls`, 404, "Invalid method"],
    ];
    for (const [path, status, body] of cases) {
      const res = await get(emu, path);
      expect([res.status, res.body], path).toEqual([status, body]);
    }
  });

  it("needs read-fs in the allocation's namespace: 403 Permission denied without it", async () => {
    const policy = (name: string, caps: string[]) => ({ Name: name, Rules: JSON.stringify({ namespace: { default: { capabilities: caps } } }) });
    const { emu, alloc } = await started({
      acl: {
        enabled: true,
        policies: [policy("logs", ["read-logs"]), policy("fs", ["read-fs"])],
        tokens: [
          { AccessorID: "a1", SecretID: "11111111-1111-1111-1111-111111111111", Type: "client", Policies: ["logs"] },
          { AccessorID: "a2", SecretID: "22222222-2222-2222-2222-222222222222", Type: "client", Policies: ["fs"] },
          { AccessorID: "a9", SecretID: MANAGEMENT, Type: "management" },
        ],
      },
    });
    for (const route of [`ls/${alloc}`, `stat/${alloc}?path=alloc`, `cat/${alloc}?path=server/local/app.conf`, `readat/${alloc}?path=server/local/app.conf&offset=0`]) {
      expect((await get(emu, route, "22222222-2222-2222-2222-222222222222")).status, route).toBe(200);
      const denied = await get(emu, route, "11111111-1111-1111-1111-111111111111");
      expect([denied.status, denied.body], route).toEqual([403, "Permission denied"]);
    }
  });

  it("is absent until the client has the allocation (a pending one is unknown to it)", async () => {
    const emu = await createStandin({ fixture: { scheduler: { jobs: [job()] } } });
    emu.clock.advance("100ms");
    const [stub] = (await (await emu.scheduler.request("/v1/job/web/allocations")).json()) as Json[];
    expect(stub!.ClientStatus).toBe("pending");
    expect(await get(emu, `ls/${stub!.ID}`)).toMatchObject({ status: 404, body: `Unknown allocation "${stub!.ID}"` });
  });
});
