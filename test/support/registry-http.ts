/**
 * The registry's HTTP surface in process, for the catalog and health tests:
 * requests, a catalog registration that must succeed, a JSON read that must
 * be a 200, and an emulator made from a registry fixture section.
 */
import { expect } from "vitest";
import { createStandin, type CreateStandinOptions, type Standin } from "../../src/emulator.js";
import { send, type SendInit, type TextAnswer } from "./call.js";

export const req = (emu: Standin, path: string, init: SendInit = {}): Promise<TextAnswer> => send(emu.registry, path, init);
export const put = (emu: Standin, path: string, body: unknown, headers?: Record<string, string>) => req(emu, path, { method: "PUT", body: JSON.stringify(body), headers });
export const indexOf = (res: TextAnswer) => Number(res.headers.get("x-consul-index"));

export async function standin(registry: Record<string, unknown> = {}): Promise<Standin> {
  return createStandin({ fixture: { registry } as CreateStandinOptions["fixture"] });
}

export async function register(emu: Standin, body: Record<string, unknown>, headers?: Record<string, string>): Promise<void> {
  const res = await put(emu, "/v1/catalog/register", { Address: "10.0.0.1", ...body }, headers);
  expect([res.status, res.text]).toEqual([200, "true"]);
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers
export async function getJSON(emu: Standin, path: string, headers?: Record<string, string>): Promise<{ body: any; res: TextAnswer }> {
  const res = await req(emu, path, { headers });
  expect(res.status, res.text).toBe(200);
  return { body: JSON.parse(res.text), res };
}

/** Lets every pending microtask and immediate run, so a request that can answer has answered. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}
