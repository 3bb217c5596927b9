/**
 * No secret reaches a recording: an ACL bootstrap's SecretID in the answer,
 * then the same secret in X-Nomad-Token, `Authorization: Bearer` and
 * `?token=`, a SecretID chosen in a request body, an echo API key in `?key=`
 * and `X-Api-Key`: each is written as `standin-redacted:sha256:<16 hex>`,
 * the same secret the same reference everywhere. And the budget: past it the
 * recording says where it stopped while the proxy goes on forwarding.
 */
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ENTRY_OVERHEAD } from "../../src/control/tape.js";
import { startRecorder } from "../../src/parity/record/recorder.js";
import type { Recording } from "../../src/parity/recording.js";
import { startStandin } from "../../src/server.js";
import { raw } from "./record-helpers.js";

const anyPorts = { scheduler: 0, registry: 0, echo: 0 };
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const reference = (secret: string) => `standin-redacted:sha256:${createHash("sha256").update(secret, "utf8").digest("hex").slice(0, 16)}`;

describe("secrets in a recording", () => {
  it("an ACL bootstrap's secret, then that secret in every place a client puts it, is one reference and never itself", async () => {
    const upstream = await startStandin({ ports: anyPorts, fixture: { scheduler: { acl: { enabled: true } } } });
    cleanups.push(() => upstream.close());
    const directory = await mkdtemp(join(tmpdir(), "standin-record-"));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const out = join(directory, "run.recording.json");
    const recorder = await startRecorder({ upstreams: { ...upstream.urls }, out, ports: anyPorts, readProducts: false });
    cleanups.push(() => recorder.close());
    const { scheduler, registry, echo } = recorder.urls as Record<string, string>;

    const bootstrap = await raw(scheduler, "/v1/acl/bootstrap", { method: "POST" });
    expect(bootstrap.status).toBe(200);
    const secret = JSON.parse(bootstrap.bytes.toString()).SecretID as string;
    expect(secret).toMatch(/^[0-9a-f-]{36}$/);
    expect((await raw(scheduler, "/v1/jobs", { headers: { "X-Nomad-Token": secret } })).status).toBe(200);
    expect((await raw(scheduler, "/v1/jobs", { headers: { Authorization: `Bearer ${secret}` } })).status).toBe(200);
    await raw(registry, `/v1/kv/a?token=${secret}&stale`);
    const chosen = "77777777-7777-7777-7777-777777777777";
    const created = await raw(scheduler, "/v1/acl/token", {
      method: "POST",
      headers: { "X-Nomad-Token": secret },
      body: JSON.stringify({ Name: "ci", Type: "management", SecretID: chosen }),
    });
    // Nomad makes its own secret whatever the request says: both are secrets all the same.
    const made = JSON.parse(created.bytes.toString()).SecretID as string;
    expect(made).toMatch(/^[0-9a-f-]{36}$/);
    expect((await raw(echo, "/echo?key=test-api-key", { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"message":"a"}' })).status).toBe(200);
    expect((await raw(echo, "/echo", { method: "POST", headers: { "Content-Type": "application/json", "X-Api-Key": "test-api-key" }, body: '{"message":"b"}' })).status).toBe(200);

    await recorder.close();
    const text = await readFile(out, "utf8");
    for (const kept of [secret, chosen, made, "test-api-key"]) expect(text, `${kept} is in the recording`).not.toContain(kept);

    const recording = JSON.parse(text) as Recording;
    const [boot, viaHeader, viaBearer, viaQuery, create, keyQuery, keyHeader] = recording.exchanges;
    const ref = reference(secret);
    expect(JSON.parse(boot!.response!.body!.text!).SecretID).toBe(ref);
    expect(viaHeader!.headers["x-nomad-token"]).toBe(ref);
    expect(viaBearer!.headers.authorization).toBe(`Bearer ${ref}`);
    expect(viaQuery!.path).toBe(`/v1/kv/a?token=${encodeURIComponent(ref)}&stale`);
    expect(create!.headers["x-nomad-token"]).toBe(ref);
    expect(JSON.parse(create!.body!.text!).SecretID).toBe(reference(chosen));
    expect(JSON.parse(create!.response!.body!.text!).SecretID).toBe(reference(made));
    expect(keyQuery!.path).toBe(`/echo?key=${encodeURIComponent(reference("test-api-key"))}`);
    expect(keyHeader!.headers["x-api-key"]).toBe(reference("test-api-key"));
    // What was not a secret is kept as it was.
    expect(JSON.parse(create!.body!.text!).Name).toBe("ci");
    expect(keyHeader!.body).toEqual({ text: '{"message":"b"}', bytes: 15 });
  });
});

describe("the recording's budget", () => {
  async function recordWith(budget: { budgetBytes?: number; capacity?: number }, requests: number) {
    const upstream = await startStandin({ ports: anyPorts });
    cleanups.push(() => upstream.close());
    const recorder = await startRecorder({ upstreams: { registry: upstream.urls.registry }, ports: anyPorts, readProducts: false, ...budget });
    cleanups.push(() => recorder.close());
    const statuses: number[] = [];
    for (let i = 1; i <= requests; i++) statuses.push((await raw(recorder.urls.registry!, `/v1/kv/k${i}`, { method: "PUT", body: `value ${i}` })).status);
    return { statuses, recording: await recorder.close() };
  }

  it("past the entry budget: the first exchange not kept is named, and every request is still forwarded", async () => {
    const { statuses, recording } = await recordWith({ capacity: 3 }, 5);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(recording.exchanges.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(recording).toMatchObject({ truncated: true, truncation: { seq: 4, reason: "entries", limit: 3 } });
  });

  it("past the byte budget: the same, counted as the tape counts (a fixed cost an exchange plus its strings and bodies)", async () => {
    // Room for two exchanges of this size, not three.
    const { statuses, recording } = await recordWith({ budgetBytes: 2 * ENTRY_OVERHEAD + 200 }, 4);
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect(recording.exchanges.map((e) => e.seq)).toEqual([1, 2]);
    expect(recording).toMatchObject({ truncated: true, truncation: { seq: 3, reason: "bytes", limit: 2 * ENTRY_OVERHEAD + 200 } });
  });

  it("within the budget: not truncated, no truncation", async () => {
    const { recording } = await recordWith({}, 2);
    expect(recording.truncated).toBe(false);
    expect(recording).not.toHaveProperty("truncation");
    expect(recording.exchanges).toHaveLength(2);
  });
});
