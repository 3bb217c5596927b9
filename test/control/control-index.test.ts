/**
 * `GET /_standin`: an index of the control API (every route with its
 * summary), from the same table as the OpenAPI document, on every port, and
 * behind the control token like every other control route but readiness.
 */
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";

type Json = any;

describe("GET /_standin", () => {
  it("lists every control route with its summary, the same routes as openapi.json, on every port", async () => {
    const emu = await createStandin();
    const res = await emu.scheduler.request("/_standin");
    expect(res.status).toBe(200);
    const index = (await res.json()) as Json;
    expect(index.openapi).toBe("/_standin/openapi.json");
    const document = (await (await emu.scheduler.request("/_standin/openapi.json")).json()) as Json;
    const documented = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, summary: operation.summary as string })),
    );
    const byKey = (entries: Array<{ method: string; path: string }>) => entries.map((e) => `${e.method} ${e.path}`).sort();
    expect(byKey(index.routes)).toEqual(byKey(documented));
    expect(index.routes).toEqual(expect.arrayContaining(documented));
    expect(index.routes).toContainEqual({ method: "POST", path: "/_standin/clock/advance", summary: expect.any(String) });
    expect(index.routes).toContainEqual({ method: "GET", path: "/_standin", summary: expect.stringMatching(/^this index/) });
    for (const app of [emu.registry, emu.echo]) expect(await (await app.request("/_standin")).json()).toEqual(index);
  });

  it("needs the control token when one is set, as every control route but readiness does", async () => {
    const emu = await createStandin({ controlToken: "s3cret" });
    expect((await emu.scheduler.request("/_standin")).status).toBe(401);
    expect((await emu.scheduler.request("/_standin", { headers: { Authorization: "Bearer s3cret" } })).status).toBe(200);
  });
});
