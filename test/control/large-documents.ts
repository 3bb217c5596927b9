/**
 * What the staged-document tests share (staged-documents, staged-reset): the
 * built document worker, a large KV fixture, a small job, and the registry
 * requests they make between slices.
 */
import { afterAll, beforeAll } from "vitest";
import { documentWorker } from "../../src/control/document-worker.js";
import type { Standin } from "../../src/emulator.js";

/** Large bodies are checked by the built worker (dist/), as the CLI's are: call at a test file's top level. */
export function useBuiltWorker(): void {
  const built = new URL("../../dist/control/document-worker-thread.js", import.meta.url);
  const previous = documentWorker.scriptUsed;
  beforeAll(() => documentWorker.useScript(built));
  afterAll(() => documentWorker.useScript(previous));
}

/** Entries in the large fixtures: past the staged threshold many times over. */
export const COUNT = 20_000;

/** `count` KV entries under `big/` (100-byte values). */
export const kv = (count: number) => Array.from({ length: count }, (_, i) => ({ Key: `big/${i}`, Value: "v".repeat(100) }));

/** A service job of two docker allocations. */
export const job = (id: string) => ({
  ID: id,
  Name: id,
  Type: "service",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 2, Tasks: [{ Name: "web", Driver: "docker", Config: { image: "nginx" }, Resources: { CPU: 100, MemoryMB: 64 } }] }],
});

/** A registry GET: status, index and parsed body. */
export async function get(emu: Standin, path: string): Promise<{ status: number; index: string | null; body: unknown }> {
  const res = await emu.registry.request(path);
  const text = await res.text();
  return { status: res.status, index: res.headers.get("X-Consul-Index"), body: text ? JSON.parse(text) : undefined };
}

/** A KV write. */
export function put(emu: Standin, key: string, value: string): Promise<Response> {
  return Promise.resolve(emu.registry.request(`/v1/kv/${key}`, { method: "PUT", body: value }));
}

/** The value of a `GET /v1/kv/<key>` answer, decoded. */
export const kvValue = (body: unknown) => Buffer.from((body as Array<{ Value: string }>)[0]!.Value, "base64").toString();
