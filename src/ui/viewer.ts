/**
 * `standin ui <tape>`: the dashboard on its own, showing a saved tape (the
 * CI artifact) read-only: no emulator runs but the scratch ones the tape is
 * replayed into. The page, its files and its API sit at the same paths as
 * on a running standin (`/_standin/ui…`), so the page is the same page.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { controlErrorResponse } from "../control/error-response.js";
import { CONTROL_PREFIX } from "../control/target.js";
import { capBody, DEFAULT_CONTROL_BODY_LIMIT } from "../http/body-cap.js";
import { DocumentedRoutes } from "../http/documented-routes.js";
import { HostGuard, refusedHost } from "../http/host-check.js";
import { noSniff } from "../http/no-sniff.js";
import { Dashboard } from "./dashboard.js";
import { uiRoutes } from "./routes.js";

export const DEFAULT_VIEWER_PORT = 4680;

export interface TapeViewer {
  /** The page's address. */
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Opens the tape (a ControlError 400 when it is not one standin can replay)
 * and, or, a parity report (`standin parity --json`), then listens.
 */
export async function startTapeViewer(options: {
  tape?: unknown;
  name?: string;
  parity?: { report: unknown; name: string };
  host?: string;
  port?: number;
  allowedHosts?: readonly string[];
}): Promise<TapeViewer> {
  const dashboard = new Dashboard(undefined);
  if (options.parity) dashboard.openParity(options.parity.report, options.parity.name);
  if (options.tape !== undefined) await dashboard.openTape(options.tape, options.name ?? "tape.json");
  const app = new Hono().basePath(CONTROL_PREFIX);
  app.onError((error, c) => controlErrorResponse(c, error));
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path} (this is standin ui: the dashboard of a tape)` }, 404));
  uiRoutes(new DocumentedRoutes("ui", app), dashboard);
  const host = options.host ?? "127.0.0.1";
  // The same guard and headers as the dashboard on a running standin (http/port-app).
  const hostGuard = new HostGuard([host, ...(options.allowedHosts ?? [])]);
  const server = createAdaptorServer({
    fetch: (request: Request) => {
      const refused = refusedHost(hostGuard, request);
      if (refused) return refused;
      // A dropped tape is a request body: capped as the control API's are.
      const capped = capBody(request, DEFAULT_CONTROL_BODY_LIMIT);
      return noSniff(capped instanceof Response ? capped : app.fetch(capped));
    },
    hostname: host,
  }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? DEFAULT_VIEWER_PORT, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}${CONTROL_PREFIX}/ui`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        dashboard.close();
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
