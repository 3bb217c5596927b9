/**
 * The emulator with its control API under `/_standin`, and whatever routes
 * the caller hands in to be mounted among the control routes (the
 * dashboard: ../emulator.ts does). A replay's scratch emulator is this,
 * without a dashboard. The one place the emulator and the control API meet.
 */
import { createControlApp, type MountedRoutes } from "../control/index.js";
import { type AttachControl, type CreateStandinOptions, createStandinWith, type Standin } from "./standin.js";

/** Attaches the control API (with the routes `extra` builds around the emulator, if given). */
export function attachControlApi(extra?: (standin: Standin) => MountedRoutes): AttachControl {
  return (standin, parts) => {
    const mounted = extra?.(standin);
    const app = createControlApp(standin, { coverage: parts.coverage, ui: mounted, token: parts.token, services: parts.services });
    return { app, close: () => mounted?.close() };
  };
}

/** Creates an emulator in process (no sockets) with the control API, and `extra`'s routes in it. */
export function createStandinWithControl(options: CreateStandinOptions = {}, extra?: (standin: Standin) => MountedRoutes): Promise<Standin> {
  return createStandinWith(options, attachControlApi(extra));
}
