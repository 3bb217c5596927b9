/**
 * Shipped fixtures by name: `default`, `token-expiry`, … resolve to the files
 * under fixtures/ wherever standin runs (a consumer's project has no
 * fixtures/ of its own), while anything path-like stays a path.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createStandin } from "../../src/emulator.js";
import { FixtureError, loadFixtureFile } from "../../src/scenario-files/load.js";
import { shippedFixtureNames, shippedFixturePath } from "../../src/index.js";
import { BIN, CLI_TEST_TIMEOUT_MS } from "../support/cli.js";

const run = promisify(execFile);

async function echoStatus(fixture: string, key: string): Promise<number> {
  const emu = await createStandin({ fixture });
  try {
    const res = await emu.app("echo").request(`/echo?key=${key}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "hi" }),
    });
    return res.status;
  } finally {
    emu.close();
  }
}

describe("shipped fixtures by name", () => {
  it("lists the files under fixtures/ and gives their absolute paths", () => {
    expect(shippedFixtureNames()).toEqual(["default", "leader-election-failover", "rolling-deploy-failing-canary", "token-expiry"]);
    const path = shippedFixturePath("token-expiry");
    expect(path).toBe(join(process.cwd(), "fixtures", "token-expiry.json"));
    expect(existsSync(path)).toBe(true);
    expect(() => shippedFixturePath("../package")).toThrow(/no shipped fixture named "..\/package"/);
  });

  it("a bare name loads the shipped file, the same document as its path", async () => {
    expect(await loadFixtureFile("token-expiry")).toEqual(await loadFixtureFile("fixtures/token-expiry.json"));
  });

  it("createStandin({ fixture: name }) starts from the shipped fixture", async () => {
    // token-expiry's only API key is ci-key-1; the default world's is test-api-key.
    expect(await echoStatus("token-expiry", "ci-key-1")).toBe(200);
    expect(await echoStatus("token-expiry", "test-api-key")).toBe(400);
    expect(await echoStatus("default", "test-api-key")).toBe(200);
  });

  it("an unknown name is refused with the shipped names; a path-like name stays a file path", async () => {
    const error = await loadFixtureFile("defualt").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FixtureError);
    expect((error as FixtureError).oneLine).toBe(
      "defualt: no shipped fixture by that name (shipped: default, leader-election-failover, rolling-deploy-failing-canary, token-expiry); a file needs a path, e.g. ./defualt or defualt.json",
    );
    const dir = mkdtempSync(join(tmpdir(), "standin-fixture-name-"));
    writeFileSync(join(dir, "default"), JSON.stringify({ echo: { apiKeys: ["from-the-file"] } }));
    const fromFile = await loadFixtureFile(join(dir, "default"));
    expect(fromFile.echo?.apiKeys).toEqual(["from-the-file"]);
  });

  it(
    "the CLI takes names from any working directory (fixtures check; start is run from a consumer's project in test/package/)",
    async () => {
      const elsewhere = mkdtempSync(join(tmpdir(), "standin-elsewhere-"));
      const check = await run(process.execPath, [BIN, "fixtures", "check", "default", "token-expiry"], { cwd: elsewhere });
      expect(check.stdout).toBe("ok default\nok token-expiry\n");
      const failed = await run(process.execPath, [BIN, "fixtures", "check", "nope"], { cwd: elsewhere }).catch((e: { code: number; stderr: string }) => e);
      expect(failed).toMatchObject({ code: 1 });
      expect((failed as { stderr: string }).stderr).toBe(
        "standin: nope: no shipped fixture by that name (shipped: default, leader-election-failover, rolling-deploy-failing-canary, token-expiry); a file needs a path, e.g. ./nope or nope.json\n",
      );
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
