/**
 * The state file's write-behind (src/state-file.ts): while the emulator runs,
 * a changed state reaches the file without close(); an unchanged one is not
 * written again (wall time moving in realtime mode is no change); a manual
 * clock move is; a failing write is reported once and the writer carries on.
 * The looks are driven by `check()` here, so nothing depends on timing; the
 * first test goes through startStandin and its timer, waiting on content.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { kvOnDisk } from "./support/state-file.js";
import { createStandin } from "../src/emulator.js";
import { startStandin } from "../src/server.js";
import { removeStaleTemporaries, StateFileWriter } from "../src/state-file.js";

const dir = mkdtempSync(join(tmpdir(), "standin-state-file-"));
const anyPorts = { scheduler: 0, registry: 0, echo: 0 };

/** Polls until `ready()` holds; fails only past a generous overall limit (no assertion on how long it took). */
async function eventually(ready: () => boolean, what: string, limitMs = 15_000): Promise<void> {
  for (let waited = 0; !ready(); waited += 10) {
    if (waited > limitMs) throw new Error(`never: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("startStandin with a state file", () => {
  it("writes an acknowledged write behind, without close()", async () => {
    const stateFile = join(dir, "behind.json");
    const srv = await startStandin({ ports: anyPorts, stateFile, stateFileIntervalMs: 20 });
    try {
      const res = await fetch(`${srv.urls.registry}/v1/kv/foo`, { method: "PUT", body: "bar" });
      expect(await res.text()).toBe("true");
      await eventually(() => kvOnDisk(stateFile)?.get("foo") === "bar", "foo=bar in the state file");
      // A later write replaces it the same way.
      await fetch(`${srv.urls.registry}/v1/kv/foo`, { method: "PUT", body: "baz" });
      await eventually(() => kvOnDisk(stateFile)?.get("foo") === "baz", "foo=baz in the state file");
      expect(readdirSync(dir).filter((name) => name.startsWith("behind.json.tmp-"))).toEqual([]);
    } finally {
      await srv.close();
    }
    expect(kvOnDisk(stateFile)?.get("foo")).toBe("baz");
  });

  it("with stateFileIntervalMs 0, writes only at close()", async () => {
    const stateFile = join(dir, "only-at-close.json");
    const srv = await startStandin({ ports: anyPorts, stateFile, stateFileIntervalMs: 0 });
    await fetch(`${srv.urls.registry}/v1/kv/k`, { method: "PUT", body: "v" });
    expect(existsSync(stateFile)).toBe(false);
    await srv.close();
    expect(kvOnDisk(stateFile)?.get("k")).toBe("v");
  });
});

describe("StateFileWriter", () => {
  it("writes a changed state once, and not again until it changes: a commit, a manual clock move, a mode change", async () => {
    const emu = await createStandin();
    const path = join(dir, "writer.json");
    const writer = new StateFileWriter(emu, path, { intervalMs: 0, upToDate: false });
    await writer.check();
    expect(writer.writes).toBe(1); // a missing file is out of date
    await writer.check();
    expect(writer.writes).toBe(1);

    await emu.registry.request("/v1/kv/a", { method: "PUT", body: "1" });
    await writer.check();
    expect(writer.writes).toBe(2);
    expect(kvOnDisk(path)?.get("a")).toBe("1");

    emu.clock.advance("1h"); // no commit: virtual time alone
    await writer.check();
    expect(writer.writes).toBe(3);
    expect(JSON.parse(readFileSync(path, "utf8")).clock.nowMs).toBe(emu.clock.now());

    emu.clock.setMode("realtime", 1000);
    await writer.check();
    expect(writer.writes).toBe(4);
    // Realtime: virtual time runs on with wall time, which alone is no reason to write.
    const before = emu.clock.now();
    await eventually(() => emu.clock.now() > before, "virtual time moving on");
    await writer.check();
    expect(writer.writes).toBe(4);
    emu.clock.pause();
    await writer.check();
    expect(writer.writes).toBe(5);
    await writer.stop();
    emu.close();
  });

  it("a state just loaded is up to date: nothing is written until it changes", async () => {
    const emu = await createStandin();
    const path = join(dir, "loaded.json");
    const writer = new StateFileWriter(emu, path, { intervalMs: 0, upToDate: true });
    await writer.check();
    expect(writer.writes).toBe(0);
    expect(existsSync(path)).toBe(false);
    emu.close();
  });

  it("reports a failing write once, keeps the emulator running, and says so when writing works again", async () => {
    const emu = await createStandin();
    const sub = join(dir, "goes-away");
    mkdirSync(sub);
    const path = join(sub, "state.json");
    const reports: string[] = [];
    const writer = new StateFileWriter(emu, path, { intervalMs: 0, upToDate: false, report: (m) => reports.push(m) });
    await writer.check();
    expect(writer.writes).toBe(1);

    rmSync(sub, { recursive: true });
    for (const value of ["1", "2", "3"]) {
      expect((await emu.registry.request("/v1/kv/x", { method: "PUT", body: value })).status).toBe(200);
      await writer.check();
    }
    expect(writer.writes).toBe(1);
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(new RegExp(`^standin: cannot write state file ${path} \\(will keep trying\\): .*ENOENT`));

    mkdirSync(sub);
    await writer.check();
    expect(writer.writes).toBe(2);
    expect(reports).toEqual([reports[0], `standin: state file ${path} written again`]);
    expect(kvOnDisk(path)?.get("x")).toBe("3");
    expect(readdirSync(sub)).toEqual(["state.json"]);
    emu.close();
  });

  it("a look while a write runs waits for it and then writes what came in meanwhile (never two at once)", async () => {
    const emu = await createStandin();
    const path = join(dir, "serial.json");
    const writer = new StateFileWriter(emu, path, { intervalMs: 0, upToDate: true });
    const put = (value: number) => emu.store.write(() => emu.store.table("test.rows").put("s", { value }));
    put(1);
    const first = writer.check(); // starts a write (the snapshot is taken now)
    put(2); // while that write runs
    const second = writer.check(); // waits for the first, then writes again
    await Promise.all([first, second]);
    expect(writer.writes).toBe(2);
    const doc = JSON.parse(readFileSync(path, "utf8")) as { store: { tables: Record<string, { rows: Record<string, unknown> }> } };
    expect(doc.store.tables["test.rows"]!.rows.s).toEqual({ value: 2 });
    emu.close();
  });
});

describe("removeStaleTemporaries", () => {
  it("removes a dead process's temporary files beside the state file and leaves everything else", async () => {
    const sub = mkdtempSync(join(dir, "stale-"));
    const path = join(sub, "state.json");
    const dead = 2 ** 22 + 12345; // above the usual pid_max: no such process
    for (const name of ["state.json", `state.json.tmp-${dead}`, `state.json.tmp-${dead}-7`, `state.json.tmp-${process.pid}-1`, "other.json.tmp-1", "state.json.tmp-x"]) {
      writeFileSync(join(sub, name), "{}");
    }
    await removeStaleTemporaries(path);
    expect(readdirSync(sub).sort()).toEqual(["other.json.tmp-1", "state.json", `state.json.tmp-${process.pid}-1`, "state.json.tmp-x"]);
  });
});
