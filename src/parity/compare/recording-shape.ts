/**
 * Checks a document is a recording `standin parity` can replay (the format
 * of src/parity/recording.ts), saying in one line what is wrong otherwise.
 */
import * as v from "valibot";
import { describeIssues } from "../../core/validation.js";
import { RECORDING_FORMAT, RECORDING_VERSION, type Recording } from "../recording.js";

export class RecordingError extends Error {}

const body = v.looseObject({ text: v.optional(v.string()), base64: v.optional(v.string()), sha256: v.optional(v.string()), bytes: v.number() });
const headers = v.record(v.string(), v.string());

const recordingShape = v.looseObject({
  format: v.literal(RECORDING_FORMAT),
  version: v.literal(RECORDING_VERSION),
  upstreams: v.record(v.string(), v.string()),
  startedAt: v.pipe(
    v.string(),
    v.check((text) => !Number.isNaN(Date.parse(text)), "an RFC 3339 instant"),
  ),
  exchanges: v.array(
    v.looseObject({
      seq: v.number(),
      service: v.picklist(["scheduler", "registry", "echo"]),
      method: v.pipe(v.string(), v.regex(/^[A-Z]+$/)),
      path: v.pipe(v.string(), v.startsWith("/")),
      headers,
      body: v.optional(body),
      sentMs: v.pipe(v.number(), v.minValue(0)),
      answeredMs: v.optional(v.number()),
      endedMs: v.optional(v.number()),
      response: v.optional(v.looseObject({ status: v.number(), headers, body: v.optional(body), streamed: v.optional(v.boolean()) })),
      error: v.optional(v.string()),
    }),
  ),
  truncated: v.boolean(),
});

export function parseRecording(document: unknown): Recording {
  if (typeof document === "object" && document !== null && "standinTape" in document)
    throw new RecordingError("this is a tape (standin replay replays it), not a recording (standin record writes one)");
  const parsed = v.safeParse(recordingShape, document);
  if (!parsed.success) throw new RecordingError(`not a standin recording: ${describeIssues(parsed.issues).slice(0, 3).join("; ")}`);
  const recording = document as Recording;
  const seen = new Set<number>();
  for (const exchange of recording.exchanges) {
    if (seen.has(exchange.seq)) throw new RecordingError(`not a standin recording: exchange #${exchange.seq} appears twice`);
    seen.add(exchange.seq);
  }
  return recording;
}
