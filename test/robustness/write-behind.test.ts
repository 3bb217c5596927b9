/**
 * The state file's write-behind with the built CLI in a child process (`npm
 * test` builds first): under a stream of acknowledged KV writes the file on
 * disk is always whole JSON, it catches up with the last acknowledged write
 * without any signal, and after a SIGKILL (no shutdown code runs) a fresh
 * start restores every acknowledged write. Nothing here asserts on time: the
 * waits are on content, with generous limits.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { kvOnDisk, watchStateFile } from "../support/state-file.js";
import { CLI_TEST_TIMEOUT_MS, startCli, type StartedCli } from "../support/cli.js";

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** KV puts from a few writers, each overwriting its own keys; only what answered `true` is acknowledged (last value per key). */
async function writeStream(s: StartedCli, count: number, writers = 4): Promise<Map<string, string>> {
  const acked = new Map<string, string>();
  await Promise.all(
    Array.from({ length: writers }, async (_, w) => {
      for (let i = 0; i < count / writers; i++) {
        const key = `durable/w${w}/k${i % 10}`;
        const value = `value ${i}`;
        const res = await fetch(`${s.urls.registry}/v1/kv/${key}`, { method: "PUT", body: value });
        if (res.status === 200 && (await res.text()) === "true") acked.set(key, value);
      }
    }),
  );
  return acked;
}

async function eventually(ready: () => boolean, what: string, limitMs = 60_000): Promise<void> {
  for (let waited = 0; !ready(); waited += 20) {
    if (waited > limitMs) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const holdsAll = (onDisk: Map<string, string> | undefined, acked: Map<string, string>) => onDisk !== undefined && [...acked].every(([key, value]) => onDisk.get(key) === value);

describe("state file write-behind", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("catches up with every acknowledged write, is never torn, and a SIGKILL keeps them all for the next start", async () => {
    const dir = mkdtempSync(join(tmpdir(), "standin-write-behind-"));
    const stateFile = join(dir, "state.json");
    const watcher = watchStateFile(stateFile);
    try {
      const first = await startCli(["--state-file", stateFile, "--state-file-interval", "50"], children);
      const acked = await writeStream(first, 400);
      expect(acked.size).toBe(40);
      // No signal: the file reaches the last acknowledged write on its own.
      await eventually(() => holdsAll(kvOnDisk(stateFile), acked), "every acknowledged write in the state file");

      first.child.kill("SIGKILL");
      await first.exited;
      expect(first.child.signalCode).toBe("SIGKILL");
      expect(first.stdout()).not.toContain("state written to"); // no shutdown code ran
      expect(holdsAll(kvOnDisk(stateFile), acked)).toBe(true);

      // A temporary a killed writer could have left beside it is cleared at the next start.
      writeFileSync(`${stateFile}.tmp-${first.child.pid}-99`, "{ half");
      const second = await startCli(["--state-file", stateFile], children);
      expect(readdirSync(dir)).toEqual(["state.json"]);
      const res = await fetch(`${second.urls.registry}/v1/kv/durable/?recurse`);
      const entries = (await res.json()) as Array<{ Key: string; Value: string }>;
      const restored = new Map(entries.map((e) => [e.Key, Buffer.from(e.Value, "base64").toString()]));
      expect(restored).toEqual(acked);
      second.child.kill("SIGTERM");
      expect(await second.exited).toBe(0);
    } finally {
      const { reads, torn } = await watcher.stop();
      expect(torn).toEqual([]);
      expect(reads).toBeGreaterThan(0);
    }
  });
});
