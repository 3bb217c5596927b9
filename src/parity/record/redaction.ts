/**
 * How a recording writes secrets: the real products' credentials are not
 * known to any standin state, so every one becomes
 * `standin-redacted:sha256:<16 hex>` of itself (http/redact.ts's
 * concealment), the same secret always the same reference. Besides the
 * secrets the tape knows (`Authorization`, every `*-token` header,
 * `?token=`, an answer's `"SecretID"`), a recording of a real ESP carries
 * its API key (`?key=`, `X-Api-Key`) and JWTs (`?access_token=`).
 */
import { createRedactor, type Redactor } from "../../http/redact.js";

export function recordingRedactor(): Redactor {
  return createRedactor([], undefined, { queryNames: ["key", "api_key", "access_token"], headerNames: ["x-api-key"] });
}
