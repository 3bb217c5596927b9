/**
 * The control token check (`--control-token`): every control request needs
 * `Authorization: Bearer <token>`, except the readiness probe, which answers
 * without it but says no more than whether standin is ready, and the
 * dashboard's page and files (no state in them).
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { bearerToken } from "../http/tokens.js";
import { CONTROL_PREFIX, type ControlTarget } from "./target.js";

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/**
 * Puts the token check in front of every route of the control app. `open`:
 * paths (under the prefix) that answer GETs without it: the dashboard's
 * page and files, which hold no state (a browser opening a page cannot send
 * the header; the page asks for the token and sends it from then on).
 */
export function requireControlToken(app: Hono, token: string, target: ControlTarget, open: readonly string[] = []): void {
  const expected = digest(token);
  const openPaths = new Set(open.map((path) => `${CONTROL_PREFIX}${path}`));
  app.use("*", async (c, next) => {
    if (c.req.method === "GET" && openPaths.has(c.req.path)) return next();
    const presented = bearerToken(c.req.header("Authorization"));
    // Compared in constant time (digests of equal length), so response timing says nothing about the token.
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      // The readiness probe stays public (orchestrators and CI scripts wait on it without the
      // secret), and without the token says nothing but whether standin is ready.
      if (c.req.method === "GET" && c.req.path === `${CONTROL_PREFIX}/ready`) return target.isReady ? c.json({ ready: true }) : c.json({ ready: false }, 503);
      return c.json({ error: "the control API needs Authorization: Bearer <control token>" }, 401, { "WWW-Authenticate": "Bearer" });
    }
    await next();
  });
}
