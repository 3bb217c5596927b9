/**
 * The control token check (`--control-token`): every control request needs
 * `Authorization: Bearer <token>`, except the readiness probe, which answers
 * without it but says no more than whether standin is ready.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Hono } from "hono";
import { bearerToken } from "../http/tokens.js";
import { CONTROL_PREFIX, type ControlTarget } from "./target.js";

function digest(secret: string): Buffer {
  return createHash("sha256").update(secret, "utf8").digest();
}

/** Puts the token check in front of every route of the control app. */
export function requireControlToken(app: Hono, token: string, target: ControlTarget): void {
  const expected = digest(token);
  app.use("*", async (c, next) => {
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
