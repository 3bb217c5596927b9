/**
 * The echo service (stands in for the Cloud Endpoints echo sample behind ESP).
 *
 * Foundation stage: the proxy configuration from fixtures is kept in the
 * state, and unknown paths get ESP's answer. Echo, auth-info and the token
 * checks arrive with the echo issue.
 */
import { Hono } from "hono";
import type { ServiceContext } from "../core/context.js";
import type { EchoFixture } from "../fixtures/schema.js";
import type { ServiceInstance } from "../http/service.js";

export const ECHO_CONFIG_TABLE = "echo.config";

export interface EchoProxyConfig {
  [key: string]: unknown;
  serviceName: string;
  proxy: "esp" | "espv2";
  apiKeys: string[];
}

const DEFAULT_CONFIG: EchoProxyConfig = { serviceName: "echo.standin.test", proxy: "esp", apiKeys: ["test-api-key"] };

/** ESP v1 renders errors as a google.rpc.Status with one-space indentation. */
function espStatus(code: number, message: string, detail: string): string {
  const body = { code, message, details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", stackEntries: [], detail }] };
  return JSON.stringify(body, null, 1);
}

export function createEchoService(ctx: ServiceContext): ServiceInstance<EchoFixture> {
  const config = ctx.store.table<EchoProxyConfig>(ECHO_CONFIG_TABLE);
  const app = new Hono();

  const applyConfig = (section: EchoFixture) => {
    const current = config.get("proxy") ?? DEFAULT_CONFIG;
    config.put("proxy", {
      serviceName: section.serviceName ?? current.serviceName,
      proxy: section.proxy ?? current.proxy,
      apiKeys: section.apiKeys ?? current.apiKeys,
    });
  };

  return {
    name: "echo",
    app,
    compressThreshold: 1024,
    notFound: () => {
      const dialect = config.get("proxy")?.proxy ?? "esp";
      if (dialect === "espv2") {
        return new Response(JSON.stringify({ code: 404, message: "The current request is not defined by this API." }), {
          status: 404,
          headers: { "Content-Type": "application/json" },
        });
      }
      return new Response(espStatus(5, "Method does not exist.", "service_control"), {
        status: 404,
        headers: { "Content-Type": "application/json" },
      });
    },
    initialize(sections) {
      config.put("proxy", DEFAULT_CONFIG);
      for (const section of sections) applyConfig(section);
    },
    applyFixture: applyConfig,
  };
}
