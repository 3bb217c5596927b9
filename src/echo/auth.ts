/**
 * Token authentication for an operation, in the configured proxy's dialect.
 */
import type { AuthContext, AuthResult, Dialect } from "./auth-types.js";
import { authenticateEsp } from "./esp.js";
import { authenticateEspv2 } from "./espv2.js";

export function authenticate(dialect: Dialect, request: Request, url: URL, ctx: AuthContext): Promise<AuthResult> {
  return dialect === "esp" ? authenticateEsp(request, url, ctx) : authenticateEspv2(request, url, ctx);
}
