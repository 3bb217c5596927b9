/**
 * The answers the proxy itself gives (as opposed to the backend's), in each
 * dialect's format:
 * - ESP: a google.rpc.Status printed with one-space indentation, with a
 *   DebugInfo detail naming the stage (`auth`, `service_control`), and on
 *   every 401/403 a `WWW-Authenticate` header (nginx's error.cc);
 * - ESPv2: Envoy's local reply `{"code":<status>,"message":"…"}`, with
 *   `WWW-Authenticate: Bearer realm="<URI>"` on JWT failures.
 */
import type { Dialect } from "./auth-types.js";
import { bufferedResponse } from "../http/respond.js";

export interface ProxyError {
  readonly status: number;
  /** google.rpc code (ESP's body). */
  readonly rpcCode: number;
  /** ESP's message. */
  readonly esp: string;
  /** ESPv2's message. */
  readonly espv2: string;
  /** ESP's DebugInfo detail. */
  readonly stage: "auth" | "service_control";
  /** A token was found in the request (ESP: `error="invalid_token"`; ESPv2: set unless the token was missing). */
  readonly tokenFound?: boolean;
  /** A JWT failure (ESPv2 only adds WWW-Authenticate to those). */
  readonly jwt?: boolean;
}

const UNREGISTERED =
  "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.";
const KEY_INVALID = "API key not valid. Please pass a valid API key.";

export const apiKeyMissing: ProxyError = { status: 401, rpcCode: 16, esp: UNREGISTERED, espv2: `UNAUTHENTICATED: ${UNREGISTERED}`, stage: "service_control" };
export const apiKeyInvalid: ProxyError = { status: 400, rpcCode: 3, esp: KEY_INVALID, espv2: `INVALID_ARGUMENT: ${KEY_INVALID}`, stage: "service_control" };
export const methodNotFound: ProxyError = {
  status: 404,
  rpcCode: 5,
  esp: "Method does not exist.",
  espv2: "The current request is not defined by this API.",
  stage: "service_control",
};
/** ESP: CORS preflights are refused unless the service allows CORS (the sample does not). */
export const corsRefused: ProxyError = { status: 403, rpcCode: 7, esp: "The service does not allow CORS traffic.", espv2: "", stage: "service_control" };

/** ESPv2: a known path with another method. */
export function methodNotAllowed(template: string): ProxyError {
  const message = `The current request is matched to the defined url template "${template}" but its http method is not allowed`;
  return { status: 405, rpcCode: 5, esp: message, espv2: message, stage: "service_control" };
}

/** A JWT failure: `reason` is already in the dialect's words. */
export function jwtFailure(dialect: Dialect, status: 401 | 403, reason: string, tokenFound: boolean): ProxyError {
  const message = dialect === "esp" ? `JWT validation failed: ${reason}` : reason;
  return { status, rpcCode: status === 403 ? 7 : 16, esp: message, espv2: message, stage: "auth", tokenFound, jwt: true };
}

export function proxyErrorResponse(dialect: Dialect, error: ProxyError, requestUrl: URL): Response {
  const headers = new Headers({ "Content-Type": "application/json" });
  if (dialect === "esp") {
    if (error.status === 401 || error.status === 403) headers.set("WWW-Authenticate", error.tokenFound ? 'Bearer, error="invalid_token"' : "Bearer");
    const body = {
      code: error.rpcCode,
      message: error.esp,
      details: [{ "@type": "type.googleapis.com/google.rpc.DebugInfo", stackEntries: [], detail: error.stage }],
    };
    return bufferedResponse(JSON.stringify(body, null, 1), { status: error.status, headers });
  }
  if (error.jwt) {
    // Envoy's realm is the original URI with the path cut at 256 characters.
    const realm = `${requestUrl.protocol}//${requestUrl.host}${(requestUrl.pathname + requestUrl.search).slice(0, 256)}`;
    headers.set("WWW-Authenticate", `Bearer realm="${realm}"${error.tokenFound ? ', error="invalid_token"' : ""}`);
  }
  return bufferedResponse(JSON.stringify({ code: error.status, message: error.espv2 }), { status: error.status, headers });
}
