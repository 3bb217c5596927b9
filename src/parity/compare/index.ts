/**
 * `standin parity <recording>` in process: replay the recording against a
 * fresh standin, compare, apply the waivers, report.
 */
import { parseRecording } from "./recording-shape.js";
import { buildReport, type ParityReport } from "./report.js";
import { type ParityOptions, replayRecording } from "./replay-recording.js";
import { parseWaivers, WaiverMatcher } from "./waivers.js";

export { RecordingError } from "./recording-shape.js";
export { formatReport, summaryLine, type ParityReport } from "./report.js";
export { WaiverError } from "./waivers.js";

export async function parity(recordingDocument: unknown, options: ParityOptions & { waivers?: unknown } = {}): Promise<ParityReport> {
  const recording = parseRecording(recordingDocument);
  const waivers = options.waivers === undefined ? [] : parseWaivers(options.waivers);
  const compared = await replayRecording(recording, options);
  return buildReport(recording, compared, new WaiverMatcher(waivers), waivers);
}
