/**
 * Looking at a state file from the outside, as a crash would leave it.
 */
import { readFileSync } from "node:fs";
import { setImmediate as turn } from "node:timers/promises";

/** The state file's KV values (decoded), or undefined while there is no whole file. */
export function kvOnDisk(path: string): Map<string, string> | undefined {
  try {
    const doc = JSON.parse(readFileSync(path, "utf8")) as { store: { tables: Record<string, { rows: Record<string, { Value: string | null }> }> } };
    const rows = doc.store.tables["registry.kv"]?.rows ?? {};
    return new Map(Object.entries(rows).map(([key, row]) => [key, Buffer.from(row.Value ?? "", "base64").toString()]));
  } catch {
    return undefined;
  }
}

/**
 * Reads the state file over and over until stopped: every read must be absent
 * or complete JSON (the file is replaced by a rename, never written in place).
 */
export function watchStateFile(path: string) {
  let running = true;
  let reads = 0;
  const torn: string[] = [];
  const loop = (async () => {
    while (running) {
      let text: string | undefined;
      try {
        text = readFileSync(path, "utf8");
      } catch {
        // not there yet
      }
      if (text !== undefined) {
        reads++;
        try {
          JSON.parse(text);
        } catch {
          torn.push(`${text.length} bytes: …${text.slice(-40)}`);
        }
      }
      await turn();
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return { reads, torn };
    },
  };
}
