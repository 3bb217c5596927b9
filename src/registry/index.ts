/**
 * The registry service (stands in for Consul's session endpoints).
 *
 * Foundation stage: the agent configuration from fixtures is kept in the
 * state and `GET /v1/status/leader` answers as a single-server agent does.
 * Sessions, the catalog and KV locks arrive with the registry issue.
 */
import { Hono } from "hono";
import type { ServiceContext } from "../core/context.js";
import type { RegistryFixture } from "../fixtures/schema.js";
import { wantsPretty } from "../http/pretty.js";
import { jsonResponse, textResponse } from "../http/respond.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";

export const REGISTRY_CONFIG_TABLE = "registry.config";

export interface RegistryAgentConfig {
  [key: string]: unknown;
  datacenter: string;
  agentNode: string;
  defaultCheck: string;
}

const DEFAULT_CONFIG: RegistryAgentConfig = { datacenter: "dc1", agentNode: "standin", defaultCheck: "agentHealth" };

export function createRegistryService(ctx: ServiceContext): ServiceInstance<RegistryFixture> {
  const settings = settingsRow(ctx.store.table<RegistryAgentConfig>(REGISTRY_CONFIG_TABLE), "agent", DEFAULT_CONFIG, (current, section: RegistryFixture) => ({
    datacenter: section.datacenter ?? current.datacenter,
    agentNode: section.agentNode ?? current.agentNode,
    defaultCheck: section.defaultCheck ?? current.defaultCheck,
  }));
  const app = new Hono();

  // Go's encoding/json with HTML escaping, as Consul writes it.
  app.get("/v1/status/leader", (c) => jsonResponse("127.0.0.1:8300", { escapeHTML: true, pretty: wantsPretty(c.req.url, "registry") }));

  return {
    name: "registry",
    app,
    compressThreshold: 1400, // Consul's gziphandler minimum size
    // Consul answers unknown paths with Fprintln, hence the trailing newline.
    notFound: (c) =>
      textResponse(
        404,
        new URL(c.req.url).pathname.startsWith("/v1/")
          ? "Invalid URL path: not a recognized HTTP API endpoint\n"
          : "Invalid URL path: if attempting to use the HTTP API, ensure the path starts with '/v1/'\n",
      ),
    initialize: settings.initialize,
    applyFixture: settings.apply,
  };
}
