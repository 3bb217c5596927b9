import { describe, expect, it } from "vitest";
import { CappedLog, type RecordedRequest } from "../../src/core/journal.js";
import { RequestJournal } from "../../src/core/request-journal.js";
import { journalEntrySize } from "../../src/http/middleware.js";

/** The three shapes journalEntry makes: no body, a body kept as text, a rejected body kept as its digest. */
function entry(n: number): RecordedRequest {
  const common = {
    seq: 0,
    at: 1_700_000_000_000 + n,
    service: n % 3 === 0 ? "echo" : "registry",
    method: n % 2 === 0 ? "POST" : "GET",
    path: `/v1/kv/key-${n % 7}`,
    query: n % 5 === 0 ? "?token=standin-redacted:control-token" : "",
    headers: { "content-type": "application/json", "x-n": String(n % 4) },
  };
  if (n % 4 === 0) return { ...common, body: null, bodyTruncated: false, status: 200, index: n };
  if (n % 4 === 1) return { ...common, body: null, bodyTruncated: false, status: 413, index: n, bodyBytes: 5000 + n, bodyDigest: `sha256:${n}` };
  return { ...common, body: "x".repeat(n % 50), bodyTruncated: n % 8 === 2, status: 201, index: n, bodyBytes: n % 50 };
}

/** The journal's answers, as JSON text: same fields, same values, same field order. */
function answers(log: { query(o?: { since?: number; limit?: number; where?: (e: RecordedRequest) => boolean }): RecordedRequest[] }, since: number, limit?: number) {
  return [
    JSON.stringify(log.query()),
    JSON.stringify(log.query({ since })),
    JSON.stringify(log.query({ since, limit })),
    JSON.stringify(log.query({ limit, where: (e) => e.method === "POST" })),
  ];
}

describe("RequestJournal (the request journal in columns)", () => {
  it("answers as a CappedLog of the same entries does, through appends, both caps, new caps and clears", () => {
    const columns = new RequestJournal(50, 4_000, journalEntrySize);
    const objects = new CappedLog<RecordedRequest>(50, 4_000, journalEntrySize);
    let seed = 7;
    const next = (bound: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % bound;
    };
    for (let n = 0; n < 3_000; n++) {
      const e = entry(n);
      expect(columns.append(structuredClone(e)).seq).toBe(objects.append(structuredClone(e)).seq);
      if (n % 97 === 0) {
        const entries = 1 + next(120);
        const bytes = next(3) === 0 ? Infinity : 500 + next(20_000);
        columns.setCaps(entries, bytes);
        objects.setCaps(entries, bytes);
      }
      if (n === 1_500) {
        columns.clear();
        objects.clear();
      }
      expect([columns.size, columns.bytes, columns.droppedCount, columns.lastSeq]).toEqual([objects.size, objects.bytes, objects.droppedCount, objects.lastSeq]);
      if (n % 13 === 0) {
        const since = next(n + 2);
        const limit = next(5) === 0 ? undefined : next(60);
        expect(answers(columns, since, limit)).toEqual(answers(objects, since, limit));
      }
    }
  });

  it("keeps its entry cap, newest kept, and numbers entries without gaps across drops", () => {
    const journal = new RequestJournal(3);
    for (let n = 0; n < 10; n++) journal.append(entry(n));
    expect(journal.query().map((e) => [e.seq, e.index])).toEqual([
      [8, 7],
      [9, 8],
      [10, 9],
    ]);
    expect(journal.query({ since: 9 }).map((e) => e.seq)).toEqual([10]);
    expect(journal.query({ since: 2, limit: 2 }).map((e) => e.seq)).toEqual([9, 10]);
    expect(journal.droppedCount).toBe(7);
  });

  it("keeps the newest entry even when it alone is over the byte budget", () => {
    const journal = new RequestJournal(10, 100, () => 1_000);
    journal.append(entry(1));
    journal.append(entry(2));
    expect(journal.query().map((e) => e.seq)).toEqual([2]);
    expect(journal.bytes).toBe(1_000);
  });

  it("refuses caps that are not positive integers", () => {
    expect(() => new RequestJournal(0)).toThrow(RangeError);
    expect(() => new RequestJournal(5).setCaps(5, 0.5)).toThrow(RangeError);
  });
});
