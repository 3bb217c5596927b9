/**
 * Secrets stay out of artifacts: the tape, the request journal and
 * /_standin/requests write every credential (Authorization, X-*-Token
 * headers under both names, ?token=, the control token) as a reference, and
 * a replay of a run that used them still has zero divergences.
 */
import { describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { replayTape } from "../../src/replay.js";

type Json = Record<string, any>;

const NOMAD_SECRET = "6a1f5c2e-0d4b-4c8e-9f3a-2b7d1e5c9a40";
const CONSUL_SECRET = "consul-s3cret-value";
const CONTROL_TOKEN = "control-s3cret";
const WRONG = "not-a-known-token-0001";

const fixture = {
  scheduler: {
    acl: {
      enabled: true,
      policies: [{ Name: "readonly", Rules: 'namespace "default" { policy = "read" }' }],
      tokens: [{ AccessorID: "a1b2c3d4-0000-4000-8000-000000000001", SecretID: NOMAD_SECRET, Name: "root", Type: "management" }],
    },
  },
  registry: { acl: { enabled: true, defaultPolicy: "deny", tokens: [{ AccessorID: "acc-kv", SecretID: CONSUL_SECRET, Rules: { key_prefix: { "": { policy: "write" } } } }] } },
};

const auth = { Authorization: `Bearer ${CONTROL_TOKEN}` };

async function run(emu: Standin): Promise<{ minted: string; created: string }> {
  await emu.scheduler.request("/v1/jobs", { headers: { "X-Nomad-Token": NOMAD_SECRET } });
  await emu.scheduler.request("/v1/jobs", { headers: { "X-Scheduler-Token": NOMAD_SECRET } });
  await emu.scheduler.request("/v1/jobs", { headers: { Authorization: `Bearer ${NOMAD_SECRET}` } });
  expect((await emu.scheduler.request("/v1/jobs", { headers: { "X-Nomad-Token": WRONG } })).status).toBe(403);
  // A token made during the run, then used: written by its accessor too.
  const made = (await (
    await emu.scheduler.request("/v1/acl/token", {
      method: "POST",
      headers: { "X-Nomad-Token": NOMAD_SECRET },
      body: JSON.stringify({ Name: "ci", Type: "client", Policies: ["readonly"] }),
    })
  ).json()) as Json;
  expect((await emu.scheduler.request("/v1/jobs", { headers: { "X-Nomad-Token": made.SecretID } })).status).toBe(200);
  await emu.registry.request("/v1/kv/app", { method: "PUT", body: "v", headers: { "X-Consul-Token": CONSUL_SECRET } });
  await emu.registry.request(`/v1/kv/app?token=${CONSUL_SECRET}`);
  await emu.registry.request("/v1/kv/app", { headers: { "X-Registry-Token": CONSUL_SECRET } });
  expect((await emu.registry.request(`/v1/kv/app?token=${WRONG}`)).status).toBe(403);
  // A service control route, with the control token: on the tape.
  await emu.registry.request("/_standin/registry/checks", { method: "POST", headers: auth, body: JSON.stringify({ CheckID: "serfHealth", Status: "passing" }) });
  // A token signed by an emulator-held key is not a secret of the user's: written by its claims, signed again on replay.
  const minted = ((await (await emu.echo.request("/_standin/echo/tokens", { method: "POST", headers: auth, body: JSON.stringify({ scheme: "provider_jwt" }) })).json()) as Json)
    .token as string;
  expect((await emu.echo.request("/auth/info/providerjwt?key=test-api-key", { headers: { Authorization: `Bearer ${minted}` } })).status).toBe(200);
  return { minted, created: made.SecretID };
}

describe("credentials in artifacts", () => {
  it("the tape and the journal hold references, never the secrets, and the tape replays with zero divergences", async () => {
    const emu = await createStandin({ fixture, controlToken: CONTROL_TOKEN });
    const { minted, created } = await run(emu);
    const tapeRes = await emu.scheduler.request("/_standin/tape", { headers: auth });
    const tape = (await tapeRes.json()) as Json;
    const requests = (await (await emu.scheduler.request("/_standin/requests", { headers: auth })).json()) as Json;

    // The start fixtures are the user's own file; the entries are what the run sent and got back.
    const entries = JSON.stringify(tape.entries);
    const journal = JSON.stringify(requests);
    for (const secret of [NOMAD_SECRET, CONSUL_SECRET, CONTROL_TOKEN, WRONG, created]) {
      expect(entries).not.toContain(secret);
      expect(journal).not.toContain(secret);
    }
    // A token signed by the emulator's public test key is no secret: its mint answer keeps it; the requests that present it do not.
    const signature = minted.split(".")[2]!;
    expect(JSON.stringify(tape.entries.filter((e: Json) => e.path !== "/_standin/echo/tokens"))).not.toContain(signature);
    expect(journal).not.toContain(signature);

    const headers = tape.entries.filter((e: Json) => e.kind === "request").map((e: Json) => e.headers);
    expect(headers[0]["x-nomad-token"]).toBe("standin-redacted:scheduler:a1b2c3d4-0000-4000-8000-000000000001");
    expect(headers[1]["x-scheduler-token"]).toBe("standin-redacted:scheduler:a1b2c3d4-0000-4000-8000-000000000001");
    expect(headers[2].authorization).toBe("Bearer standin-redacted:scheduler:a1b2c3d4-0000-4000-8000-000000000001");
    expect(headers[3]["x-nomad-token"]).toMatch(/^standin-redacted:sha256:[0-9a-f]{16}$/);
    const paths = tape.entries.filter((e: Json) => e.kind === "request").map((e: Json) => e.path);
    expect(paths).toContain("/v1/kv/app?token=standin-redacted%3Aregistry%3Aacc-kv");
    const control = tape.entries.find((e: Json) => e.path === "/_standin/registry/checks");
    expect(control.headers.authorization).toBe("Bearer standin-redacted:control-token");
    // The token made during the run came back in its create answer: the tape has it as a reference.
    const createAnswer = tape.entries.find((e: Json) => e.path === "/v1/acl/token").response.body.text as string;
    expect(JSON.parse(createAnswer).SecretID).toMatch(/^standin-redacted:scheduler:[0-9a-f-]{36}$/);
    const kvGet = requests.requests.find((r: Json) => r.query.startsWith("?token="));
    expect(kvGet.query).toBe("?token=standin-redacted%3Aregistry%3Aacc-kv");

    const report = await replayTape(tape);
    expect(report.divergences).toEqual([]);
    expect(report.ok).toBe(true);
  });

  it("an answer with a secret read again is held once, redacted, and written once then as its hash", async () => {
    const emu = await createStandin({ fixture });
    for (let i = 0; i < 3; i++) expect((await emu.scheduler.request("/v1/acl/token/self", { headers: { "X-Nomad-Token": NOMAD_SECRET } })).status).toBe(200);
    const tape = (await (await emu.scheduler.request("/_standin/tape")).json()) as Json;
    const bodies = tape.entries.filter((e: Json) => e.path === "/v1/acl/token/self").map((e: Json) => e.response.body);
    expect(JSON.parse(bodies[0].text).SecretID).toBe("standin-redacted:scheduler:a1b2c3d4-0000-4000-8000-000000000001");
    expect(bodies[1]).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: bodies[0].bytes });
    expect(bodies[2]).toEqual(bodies[1]);
    expect(JSON.stringify(tape.entries)).not.toContain(NOMAD_SECRET);
    expect((await replayTape(tape)).divergences).toEqual([]);
  });

  it("without ACLs the same headers are still redacted (a digest: no state knows them)", async () => {
    const emu = await createStandin();
    await emu.scheduler.request("/v1/jobs", { headers: { "X-Nomad-Token": "whatever-secret" } });
    const [entry] = ((await (await emu.scheduler.request("/_standin/requests")).json()) as Json).requests;
    expect(entry.headers["x-nomad-token"]).toMatch(/^standin-redacted:sha256:/);
    expect((await replayTape(await (await emu.scheduler.request("/_standin/tape")).json())).ok).toBe(true);
  });
});
