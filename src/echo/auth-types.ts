/**
 * What token authentication works with, shared by the dispatcher (auth.ts)
 * and the two proxies' verifiers (esp.ts, espv2.ts), which import nothing
 * from the dispatcher.
 */
import type { EchoSchemeName, SchemeConfig } from "./schemes.js";

/** Which proxy the echo service stands behind: ESP (v1) or ESPv2. */
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
