/**
 * One declared version per product (src/core/versions.ts), reported wherever
 * the products report theirs, stated at the top of docs/known-differences.md,
 * and written nowhere else in src/.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CONSUL_VERSION, NOMAD_VERSION } from "../../src/core/versions.js";
import { createStandin } from "../../src/emulator.js";
import { call } from "../support/call.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

describe("Nomad reports the declared version", () => {
  it("in /v1/agent/self (config.Version, the member's build tag) and /v1/agent/members", async () => {
    const emu = await createStandin();
    const self = (await call(emu.scheduler, "GET", "/v1/agent/self")).body;
    expect(self.config.Version).toEqual({ Revision: "standin", Version: NOMAD_VERSION, VersionMetadata: "", VersionPrerelease: "" });
    expect(self.member.Tags.build).toBe(NOMAD_VERSION);
    // api.AgentMember: the agent's own member carries the protocol keys /v1/agent/members sends.
    const members = (await call(emu.scheduler, "GET", "/v1/agent/members")).body;
    expect(self.member).toEqual(members.Members[0]);
  });

  it("in each client node's nomad.version attribute and the node list's Version", async () => {
    const emu = await createStandin();
    const nodes = (await call(emu.scheduler, "GET", "/v1/nodes")).body as Array<{ ID: string; Version: string }>;
    expect(nodes.length).toBeGreaterThan(0);
    for (const stub of nodes) {
      expect(stub.Version).toBe(NOMAD_VERSION);
      const node = (await call(emu.scheduler, "GET", `/v1/node/${stub.ID}`)).body;
      expect(node.Attributes["nomad.version"]).toBe(NOMAD_VERSION);
    }
  });
});

describe("Consul reports the declared version", () => {
  it("in /v1/agent/self (Config, DebugConfig, Stats.build, the member's build tag) and /v1/agent/members", async () => {
    const emu = await createStandin();
    const self = (await call(emu.registry, "GET", "/v1/agent/self")).body;
    expect(self.Config.Version).toBe(CONSUL_VERSION);
    expect(self.DebugConfig.Version).toBe(CONSUL_VERSION);
    expect(self.Stats.build.version).toBe(CONSUL_VERSION);
    expect(self.Member.Tags.build).toBe(`${CONSUL_VERSION}:standin`);
    const [member] = (await call(emu.registry, "GET", "/v1/agent/members")).body;
    expect(member.Tags.build).toBe(`${CONSUL_VERSION}:standin`);
  });
});

describe("the versions are declared once", () => {
  it("docs/known-differences.md states both at its top", () => {
    const head = readFileSync(join(ROOT, "docs/known-differences.md"), "utf8").split("\n").slice(0, 12).join("\n");
    expect(head).toContain(`Nomad ${NOMAD_VERSION}`);
    expect(head).toContain(`Consul ${CONSUL_VERSION}`);
  });

  it("no other file in src/ writes a product version as a string", () => {
    const literal = /["'`]v?1\.(9|1\d|2\d)\.\d+/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (path.endsWith(".ts") && !path.endsWith(join("core", "versions.ts")) && literal.test(readFileSync(path, "utf8"))) offenders.push(path);
      }
    };
    walk(join(ROOT, "src"));
    expect(offenders).toEqual([]);
  });
});
