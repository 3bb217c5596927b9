/**
 * The control API never reads a file a request names: fixtures sent over
 * HTTP carry job files and key sets inline, and a fixture file given to
 * standin reads files only from under its own directory (issue 30, item 3).
 */
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { checkStartFixtures } from "../../src/standin/fixtures-check.js";
import { call } from "../support/call.js";

const root = mkdtempSync(join(tmpdir(), "standin-host-files-"));
const fixtures = join(root, "fixtures");
mkdirSync(join(fixtures, "jobs"), { recursive: true });
const JOB = 'job "web" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "exec"\n    }\n  }\n}\n';
// A valid job file outside the fixtures' directory, and a secret-looking file beside it.
writeFileSync(join(root, "outside.nomad.hcl"), JOB);
writeFileSync(join(root, "secret.txt"), "root:$6$very-secret-hash:19000:0:99999:7:::\n");
writeFileSync(join(fixtures, "jobs", "web.nomad.hcl"), JOB);
writeFileSync(join(root, "keys.json"), JSON.stringify({ keys: [{ kty: "RSA", n: "abc", e: "AQAB", kid: "k1" }] }));
symlinkSync(join(root, "outside.nomad.hcl"), join(fixtures, "jobs", "link-out.nomad.hcl"));
symlinkSync(join(fixtures, "jobs", "web.nomad.hcl"), join(fixtures, "jobs", "link-in.nomad.hcl"));

function fixtureFile(name: string, document: unknown): string {
  const file = join(fixtures, name);
  writeFileSync(file, JSON.stringify(document));
  return file;
}

describe("fixtures sent over HTTP name no files", () => {
  const paths = [join(root, "outside.nomad.hcl"), join(root, "secret.txt"), join(root, "no-such-file"), "jobs/web.nomad.hcl"];

  it("POST /_standin/fixtures refuses an hcl path by its place in the document, the same whatever the file", async () => {
    const emu = await createStandin();
    const answers = [];
    for (const path of paths) {
      const before = emu.stateHash();
      const res = await call(emu.scheduler, "POST", "/_standin/fixtures", { scheduler: { jobs: [{ hcl: path }] } });
      expect(res.status).toBe(400);
      expect(res.body.problems).toHaveLength(1);
      expect(res.body.problems[0]).toMatch(/^scheduler\.jobs\[0\]\.hcl: a fixture document refers to no files \(give the job file's text as "hclSource"\)/);
      expect(res.text).not.toMatch(/ENOENT|secret|root:|cannot read/);
      expect(emu.stateHash()).toBe(before);
      answers.push(res.text);
    }
    // Existing, missing and secret files answer alike: no existence oracle.
    expect(new Set(answers).size).toBe(1);
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(404);
    await emu.close();
  });

  it("POST /_standin/reset with a fixture, region jobs and echo key files are refused the same way", async () => {
    const emu = await createStandin();
    const reset = await call(emu.scheduler, "POST", "/_standin/reset", { fixture: { scheduler: { regions: { west: { jobs: [{ hcl: join(root, "outside.nomad.hcl") }] } } } } });
    expect(reset.status).toBe(400);
    expect(reset.body.problems).toEqual([expect.stringMatching(/^scheduler\.regions\.west\.jobs\[0\]\.hcl: a fixture document refers to no files/)]);
    const keys = await call(emu.echo, "POST", "/_standin/fixtures", {
      echo: { schemes: { identity_platform: { jwksFile: join(root, "keys.json") }, provider_service_account: { x509File: join(root, "secret.txt") } } },
    });
    expect(keys.status).toBe(400);
    expect(keys.body.problems).toEqual([
      expect.stringMatching(/^echo\.schemes\.provider_service_account\.x509File: .*give the certificates themselves as "x509"/),
      expect.stringMatching(/^echo\.schemes\.identity_platform\.jwksFile: .*give the key set itself as "jwks"/),
    ]);
    expect(keys.text).not.toMatch(/secret|root:|kid/);
    await emu.close();
  });

  it("a fixture body that is a path is refused; a shipped fixture's name and inline hclSource are taken", async () => {
    const emu = await createStandin();
    const file = fixtureFile("web.json", { scheduler: { jobs: [{ hcl: "jobs/web.nomad.hcl" }] } });
    for (const [route, body] of [
      ["/_standin/fixtures", JSON.stringify(file)],
      ["/_standin/reset", { fixture: file }],
      ["/_standin/reset", { fixture: join(root, "secret.txt") }],
    ] as const) {
      const res = await call(emu.scheduler, "POST", route, body);
      expect(res.status, route).toBe(400);
      expect(res.body.error).toMatch(/is a document or the name of a shipped fixture .*not a file path/);
      expect(res.text).not.toMatch(/ENOENT|secret|root:/);
    }
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(404);
    expect((await call(emu.scheduler, "POST", "/_standin/reset", { fixture: "token-expiry" })).status).toBe(200);
    const inline = await call(emu.scheduler, "POST", "/_standin/fixtures", { scheduler: { jobs: [{ hclSource: JOB }] } });
    expect(inline.status, inline.text).toBe(200);
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(200);
    await emu.close();
  });

  it("a job-register action's hcl path is refused without reading it", async () => {
    const emu = await createStandin();
    const res = await call(emu.scheduler, "POST", "/_standin/actions", { do: "job-register", job: { hcl: join(root, "outside.nomad.hcl") } });
    expect(res.status).toBe(400);
    expect(res.text).toMatch(/give the text as \\"hclSource\\"/);
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(404);
    await emu.close();
  });

  it("in process, a fixture document refers to no files either", async () => {
    await expect(createStandin({ fixture: { scheduler: { jobs: [{ hcl: join(root, "outside.nomad.hcl") }] } } })).rejects.toThrow(
      /scheduler\.jobs\[0\]\.hcl: a fixture document refers to no files/,
    );
  });
});

describe("a fixture file reads files only from under its own directory", () => {
  it("a path inside it (also through a link that stays inside) is read", async () => {
    const file = fixtureFile("inside.json", { scheduler: { jobs: [{ hcl: "jobs/link-in.nomad.hcl" }] } });
    expect(await checkStartFixtures([file])).toEqual([]);
    const emu = await createStandin({ fixture: file });
    expect((await call(emu.scheduler, "GET", "/v1/job/web")).status).toBe(200);
    await emu.close();
  });

  it.each([
    ["an absolute path", join(root, "outside.nomad.hcl")],
    ["a path climbing out", "../outside.nomad.hcl"],
    ["a path climbing out and back in", "jobs/../../fixtures/../outside.nomad.hcl"],
    ["a link out of the directory", "jobs/link-out.nomad.hcl"],
  ])("%s is refused without reading it", async (_what, path) => {
    const file = fixtureFile("escape.json", { scheduler: { jobs: [{ hcl: path }] } });
    const [problem] = await checkStartFixtures([file]);
    expect(problem?.oneLine).toBe(
      `${file}: scheduler.jobs[0].hcl: ${JSON.stringify(path)} is not under the fixture file's directory (${fixtures}); a fixture file reads files only from under its own directory`,
    );
  });

  it("key files are held to the same directory", async () => {
    const file = fixtureFile("keys-out.json", { echo: { schemes: { identity_platform: { jwksFile: "../keys.json" } } } });
    const [problem] = await checkStartFixtures([file]);
    expect(problem?.problems).toEqual([
      `echo.schemes.identity_platform.jwksFile: "../keys.json" is not under the fixture file's directory (${fixtures}); a fixture file reads files only from under its own directory`,
    ]);
  });
});

describe("a tape names no files", () => {
  it("a tape dropped on the dashboard whose start fixture or fixture entry is a path is refused without reading it", async () => {
    const emu = await createStandin();
    await call(emu.scheduler, "POST", "/_standin/fixtures", { description: "one" });
    const tape = (await call(emu.scheduler, "GET", "/_standin/tape")).body;
    const withStart = { ...tape, start: { ...tape.start, fixtures: [join(root, "secret.txt")] } };
    const withEntry = { ...tape, entries: tape.entries.map((e: { kind: string }) => (e.kind === "fixture" ? { ...e, fixture: join(root, "secret.txt") } : e)) };
    const opened = await call(emu.scheduler, "POST", "/_standin/ui/api/tape", withStart);
    expect(opened.status).toBe(400);
    expect(opened.body.error).toMatch(/not a file path/);
    const stepped = await call(emu.scheduler, "POST", "/_standin/ui/api/tape", withEntry);
    expect(stepped.text).toMatch(/not a file path/);
    for (const res of [opened, stepped]) expect(res.text).not.toMatch(/secret|root:|ENOENT|not valid JSON/);
    await emu.close();
  });

  it("a fixture applied in process from a file goes on the tape as its document", async () => {
    const emu = await createStandin();
    await emu.applyFixture(fixtureFile("applied.json", { scheduler: { jobs: [{ hcl: "jobs/web.nomad.hcl" }] } }));
    const tape = (await call(emu.scheduler, "GET", "/_standin/tape")).body;
    const entry = tape.entries.find((e: { kind: string }) => e.kind === "fixture");
    expect(entry.fixture.scheduler.jobs[0]).toEqual({ hclSource: JOB, hclFile: "jobs/web.nomad.hcl" });
    const opened = await call(emu.scheduler, "POST", "/_standin/ui/api/tape", tape);
    expect(opened.status, opened.text).toBe(200);
    expect(opened.body.report).toMatchObject({ ok: true });
    await emu.close();
  });
});
