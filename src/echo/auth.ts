/**
 * Token authentication for an operation, in the configured proxy's dialect.
 */
import type { EchoSchemeName, SchemeConfig } from "./schemes.js";
import { authenticateEsp } from "./esp.js";
import { authenticateEspv2 } from "./espv2.js";

export type Dialect = "esp" | "espv2";

export interface AuthContext {
  readonly serviceName: string;
  readonly schemes: Readonly<Record<EchoSchemeName, SchemeConfig>>;
  /** The schemes the operation accepts, any one of which will do. */
  readonly operationSchemes: readonly EchoSchemeName[];
  /** Virtual now, whole seconds since the epoch. */
  readonly nowSeconds: number;
}

export type AuthResult =
  | { readonly ok: true; readonly token: string; readonly payload: Record<string, unknown>; readonly payloadSegment: string }
  | { readonly ok: false; readonly status: 401 | 403; readonly reason: string; readonly tokenFound: boolean };

export function authenticate(dialect: Dialect, request: Request, url: URL, ctx: AuthContext): Promise<AuthResult> {
  return dialect === "esp" ? authenticateEsp(request, url, ctx) : authenticateEspv2(request, url, ctx);
}
