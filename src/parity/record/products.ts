/**
 * The upstream products' versions, read once when the recorder starts so a
 * report names what it compared against: Nomad's `/v1/agent/self` says
 * `config.Version.Version`, Consul's `Config.Version`. Best effort: an
 * upstream that does not answer within PRODUCT_WAIT_MS, refuses (ACLs), or
 * answers something else leaves its version out, never the recording.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { RecordedService } from "../recording.js";
import type { UpstreamTrust } from "./proxy.js";

export const PRODUCT_WAIT_MS = 2000;

export async function productVersions(upstreams: Partial<Record<RecordedService, URL>>, trust?: UpstreamTrust): Promise<Partial<Record<RecordedService, string>>> {
  const versions: Partial<Record<RecordedService, string>> = {};
  await Promise.all(
    (["scheduler", "registry"] as const).map(async (service) => {
      const base = upstreams[service];
      if (!base) return;
      const version = await readVersion(service, new URL(`${base.pathname.replace(/\/$/, "")}/v1/agent/self`, base), trust);
      if (version !== undefined) versions[service] = version;
    }),
  );
  return versions;
}

async function readVersion(service: "scheduler" | "registry", url: URL, trust: UpstreamTrust | undefined): Promise<string | undefined> {
  try {
    const self = JSON.parse(await getText(url, trust)) as { config?: { Version?: { Version?: unknown } }; Config?: { Version?: unknown } };
    const version = service === "scheduler" ? self.config?.Version?.Version : self.Config?.Version;
    return typeof version === "string" && version !== "" ? version : undefined;
  } catch {
    return undefined;
  }
}

/** A 200's body; anything else rejects. Through node's client, not fetch: an https upstream is trusted as the forwarded requests trust it (`--upstream-ca`). */
function getText(url: URL, trust: UpstreamTrust | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const https = url.protocol === "https:";
    const sent = (https ? httpsRequest : httpRequest)(
      url,
      {
        headers: { Accept: "application/json" },
        agent: false,
        signal: AbortSignal.timeout(PRODUCT_WAIT_MS),
        ...(https && trust && { ca: trust.ca, rejectUnauthorized: trust.rejectUnauthorized }),
      },
      (answer: IncomingMessage) => {
        if (answer.statusCode !== 200) {
          answer.resume();
          reject(new Error(`status ${answer.statusCode}`));
          return;
        }
        let text = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => (text += chunk));
        answer.on("end", () => resolve(text));
        answer.on("error", reject);
        // Cut (the wait ran out): settles too; after the end it changes nothing.
        answer.on("close", () => reject(new Error("cut")));
      },
    );
    sent.on("error", reject);
    sent.end();
  });
}
