/**
 * One HTTP request from a client command: fetch, or with a CA file
 * node:https trusting it (Node's fetch takes no CA; NODE_EXTRA_CA_CERTS
 * works too, but only from the start).
 */
import { readFileSync } from "node:fs";
import { CliFailure } from "./failure.js";
import { fileErrorReason } from "./files.js";

export interface SentResponse {
  ok: boolean;
  status: number;
  text: string;
}

export async function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  caFile: string | undefined,
  signal?: AbortSignal,
): Promise<SentResponse> {
  if (!caFile || url.protocol !== "https:") {
    const response = await fetch(url, { method, headers, body, signal });
    return { ok: response.ok, status: response.status, text: await response.text() };
  }
  let ca: string;
  try {
    ca = readFileSync(caFile, "utf8");
  } catch (error) {
    throw new CliFailure(`standin: cannot read --ca ${caFile}: ${fileErrorReason(error)}`);
  }
  const { request } = await import("node:https");
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, ca, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => resolve({ ok: res.statusCode! >= 200 && res.statusCode! < 300, status: res.statusCode!, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
