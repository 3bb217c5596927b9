/**
 * Fixture jobs written as Nomad HCL2 job files: `{"hcl": "jobs/web.nomad.hcl",
 * "vars": {…}}` (a path relative to the fixture file) or inline
 * `{"hclSource": "…"}`. They register as the job Nomad's CLI would send, and
 * a bad file stops the start with one line naming the file, line and column.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { checkStartFixtures } from "../../src/standin/fixtures-check.js";
import { call } from "../support/call.js";

const dir = mkdtempSync(join(tmpdir(), "standin-hcl-fixtures-"));
mkdirSync(join(dir, "jobs"));

function write(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

write(
  "jobs/web.nomad.hcl",
  `variable "image" {
  type = string
}
variable "count" {
  type    = number
  default = 1
}
job "web" {
  datacenters = ["dc1"]
  meta {
    build = uuidv4()
  }
  group "web" {
    count = var.count
    task "server" {
      driver = "docker"
      config {
        image = var.image
        args  = ["--port", "\${NOMAD_PORT_http}"]
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`,
);
write("jobs/bad.nomad.hcl", 'job "web" {\n  group "web" {\n    cnt = 1\n  }\n}\n');

const webFixture = write("web.json", JSON.stringify({ seed: 7, scheduler: { jobs: [{ hcl: "jobs/web.nomad.hcl", vars: { image: "redis:7", count: 2 } }] } }));

async function job(emu: Standin, id: string): Promise<Record<string, any>> {
  const res = await call(emu.scheduler, "GET", `/v1/job/${id}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe("HCL jobs in fixtures", () => {
  it("a job file relative to the fixture, with vars, registers as Nomad's CLI would send it", async () => {
    const emu = await createStandin({ fixture: webFixture });
    const web = await job(emu, "web");
    expect(web.TaskGroups[0].Count).toBe(2);
    expect(web.TaskGroups[0].Tasks[0].Config).toEqual({ image: "redis:7", args: ["--port", "${NOMAD_PORT_http}"] });
    expect(web.Datacenters).toEqual(["dc1"]);
    await emu.close();
  });

  it("uuidv4() in a job file follows the fixture's seed: the same start gives the same job", async () => {
    const first = await createStandin({ fixture: webFixture });
    const again = await createStandin({ fixture: webFixture });
    const other = await createStandin({ fixture: webFixture, seed: 8 });
    const build = async (emu: Standin) => (await job(emu, "web")).Meta.build as string;
    expect(await build(first)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(await build(again)).toBe(await build(first));
    expect(await build(other)).not.toBe(await build(first));
    for (const emu of [first, again, other]) await emu.close();
  });

  it("inline hclSource, in a fixture document and in a job-register timeline step", async () => {
    const emu = await createStandin({
      fixture: {
        scheduler: { jobs: [{ hclSource: 'job "batch" {\n  type = "batch"\n  group "g" {\n    task "t" {\n      driver = "exec"\n    }\n  }\n}' }] },
        timeline: [
          {
            at: "10s",
            do: "job-register",
            job: { hclSource: 'variable "n" {}\njob "later" {\n  group "g" {\n    count = var.n\n    task "t" {\n      driver = "exec"\n    }\n  }\n}', vars: { n: 3 } },
          },
        ],
      },
    });
    expect((await job(emu, "batch")).Type).toBe("batch");
    await emu.clock.advance("10s");
    expect((await job(emu, "later")).TaskGroups[0].Count).toBe(3);
    await emu.close();
  });

  it("a bad job file stops the start with one line naming the file, line and column", async () => {
    const bad = write("bad.json", JSON.stringify({ scheduler: { jobs: [{ hcl: "jobs/bad.nomad.hcl" }] } }));
    const [problem] = await checkStartFixtures([bad]);
    expect(problem?.oneLine).toBe(`${bad}: scheduler.jobs[0]: jobs/bad.nomad.hcl:3,5-8: Unsupported argument; An argument named "cnt" is not expected here. Did you mean "count"?`);
  });

  it("a variable without a value, a missing file and a malformed reference are named too", async () => {
    const unset = write("unset.json", JSON.stringify({ scheduler: { jobs: [{ hcl: "jobs/web.nomad.hcl" }] } }));
    expect((await checkStartFixtures([unset]))[0]?.oneLine).toBe(
      `${unset}: scheduler.jobs[0]: <nil>: Unset variable "image"; A used variable must be set or have a default value; see https://developer.hashicorp.com/nomad/docs/job-specification/hcl2/variables for details.`,
    );
    const missing = write("missing.json", JSON.stringify({ scheduler: { jobs: [{ hcl: "jobs/none.nomad.hcl" }] } }));
    expect((await checkStartFixtures([missing]))[0]?.oneLine).toBe(
      `${missing}: scheduler.jobs[0].hcl: cannot read ${join(dir, "jobs/none.nomad.hcl")}: ENOENT: no such file or directory`,
    );
    const extra = write("extra.json", JSON.stringify({ scheduler: { jobs: [{ hcl: "jobs/web.nomad.hcl", ID: "web" }] } }));
    expect((await checkStartFixtures([extra]))[0]?.oneLine).toBe(
      `${extra}: scheduler.jobs[0]: an HCL job takes only "hcl" (a file) or "hclSource" (the text), and "vars"; unexpected "ID"`,
    );
  });
});
