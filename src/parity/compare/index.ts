/**
 * `standin parity <recording>` in process: replay the recording against a
 * fresh standin, compare, apply the waivers, report.
 */
import { parseRecording } from "./recording-shape.js";
import { formatGoDuration } from "../../core/durations.js";
import { buildReport, type ParityReport } from "./report.js";
import { type ParityOptions, replayRecording } from "./replay-recording.js";
import { parseWaivers, WaiverMatcher } from "./waivers.js";
import { DEFAULT_TIME_TOLERANCE_MS } from "./world-map.js";

export { RecordingError } from "./recording-shape.js";
export { formatReport, summaryLine, type ParityReport, type ParitySettings } from "./report.js";
export { WaiverError } from "./waivers.js";

export async function parity(recordingDocument: unknown, options: ParityOptions & { waivers?: unknown } = {}): Promise<ParityReport> {
  const recording = parseRecording(recordingDocument);
  const waivers = options.waivers === undefined ? [] : parseWaivers(options.waivers);
  const compared = await replayRecording(recording, options);
  const timeToleranceMs = options.timeToleranceMs ?? DEFAULT_TIME_TOLERANCE_MS;
  const settings = { timeTolerance: formatGoDuration(BigInt(timeToleranceMs) * 1_000_000n), timeToleranceMs };
  return buildReport(recording, compared, new WaiverMatcher(waivers), waivers, settings);
}
