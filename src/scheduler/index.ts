/**
 * The scheduler service (stands in for Nomad's HTTP API).
 *
 * Foundation stage: the agent configuration from fixtures is kept in the
 * state and `GET /v1/agent/health` answers as a healthy dev agent does. Jobs,
 * nodes, allocations and the rest arrive with the scheduler issues.
 */
import { Hono } from "hono";
import type { ServiceContext } from "../core/context.js";
import type { SchedulerFixture } from "../fixtures/schema.js";
import { wantsPretty } from "../http/pretty.js";
import { emptyResponse, jsonResponse } from "../http/respond.js";
import { settingsRow, type ServiceInstance } from "../http/service.js";

export const SCHEDULER_CONFIG_TABLE = "scheduler.config";

export interface SchedulerAgentConfig {
  [key: string]: unknown;
  region: string;
  datacenter: string;
  agentName: string;
  timing: Record<string, string>;
}

const DEFAULT_CONFIG: SchedulerAgentConfig = {
  region: "global",
  datacenter: "dc1",
  agentName: "standin",
  timing: { allocStart: "1s", batchRun: "10s" },
};

export function createSchedulerService(ctx: ServiceContext): ServiceInstance<SchedulerFixture> {
  const settings = settingsRow(ctx.store.table<SchedulerAgentConfig>(SCHEDULER_CONFIG_TABLE), "agent", DEFAULT_CONFIG, (current, section: SchedulerFixture) => ({
    region: section.region ?? current.region,
    datacenter: section.datacenter ?? current.datacenter,
    agentName: section.agentName ?? current.agentName,
    timing: { ...current.timing, ...section.timing },
  }));
  const app = new Hono();

  // Nomad encodes structs with fields sorted by name: "message" before "ok".
  app.get("/v1/agent/health", (c) =>
    jsonResponse({ client: { message: "ok", ok: true }, server: { message: "ok", ok: true } }, { sortKeys: true, pretty: wantsPretty(c.req.url, "scheduler") }),
  );

  return {
    name: "scheduler",
    app,
    compressThreshold: 0, // gorilla's CompressHandler compresses every response
    notFound: (c) => {
      const url = new URL(c.req.url);
      // Nomad's root fallthrough: exactly "/" redirects to the UI, keeping the query; anything else is an empty 404.
      if (url.pathname === "/") return new Response(null, { status: 307, headers: { Location: `/ui/${url.search}` } });
      return emptyResponse(404);
    },
    initialize: settings.initialize,
    applyFixture: settings.apply,
  };
}
