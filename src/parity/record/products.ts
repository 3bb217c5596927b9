/**
 * The upstream products' versions, read once when the recorder starts so a
 * report names what it compared against: Nomad's `/v1/agent/self` says
 * `config.Version.Version`, Consul's `Config.Version`. Best effort: an
 * upstream that does not answer within PRODUCT_WAIT_MS, refuses (ACLs), or
 * answers something else leaves its version out, never the recording.
 */
import type { RecordedService } from "../recording.js";

export const PRODUCT_WAIT_MS = 2000;

export async function productVersions(upstreams: Partial<Record<RecordedService, URL>>): Promise<Partial<Record<RecordedService, string>>> {
  const versions: Partial<Record<RecordedService, string>> = {};
  await Promise.all(
    (["scheduler", "registry"] as const).map(async (service) => {
      const base = upstreams[service];
      if (!base) return;
      const version = await readVersion(service, new URL(`${base.pathname.replace(/\/$/, "")}/v1/agent/self`, base));
      if (version !== undefined) versions[service] = version;
    }),
  );
  return versions;
}

async function readVersion(service: "scheduler" | "registry", url: URL): Promise<string | undefined> {
  try {
    const answer = await fetch(url, { signal: AbortSignal.timeout(PRODUCT_WAIT_MS), headers: { Accept: "application/json" } });
    if (answer.status !== 200) return undefined;
    const self = (await answer.json()) as { config?: { Version?: { Version?: unknown } }; Config?: { Version?: unknown } };
    const version = service === "scheduler" ? self.config?.Version?.Version : self.Config?.Version;
    return typeof version === "string" && version !== "" ? version : undefined;
  } catch {
    return undefined;
  }
}
