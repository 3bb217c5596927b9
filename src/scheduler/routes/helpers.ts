/**
 * Small pieces the resources' routes share: the method check, namespace
 * scoping, the not-emulated answer, the RPC error mapping.
 */
import { textResponse } from "../../http/respond.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { CodedError } from "../engine/index.js";
import { invalidMethod, NomadError, serverError, type RequestContext } from "../http/nomad-http.js";

export const only = (rc: RequestContext, ...methods: string[]) => {
  if (!methods.includes(rc.method)) throw invalidMethod();
};
/** In the asked namespace; across `namespace=*`, only the namespaces whose `capability` the token holds (the guard checked a single one). */
export const inNamespace = (rc: RequestContext, namespace: string, capability = "read-job") =>
  rc.options.namespace === "*" ? rc.acl.allowNamespace(namespace, capability) : rc.options.namespace === namespace;
export const notYet = (what: string) => textResponse(501, `standin does not emulate ${what} (Nomad): see docs/known-differences.md`);

/** An evaluation's or a deployment's allocations (one namespace): 403 when the token may not read it (Nomad checks the first). */
export function readableAllocs<T extends { Namespace: string }>(rc: RequestContext, allocs: T[]): T[] {
  if (allocs.length > 0 && !rc.acl.allowNamespace(allocs[0]!.Namespace, "read-job")) throw permissionDenied();
  return allocs;
}

/** Nomad's decodeBody: an empty body is a 400, malformed JSON a 400 with the decoder's words. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Runs an engine operation; its errors are the RPC layer's plain 500s. */
export function rpc<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof CodedError) throw new NomadError(error.status, error.message);
    if (error instanceof Error && !(error instanceof NomadError)) throw serverError(error.message);
    throw error;
  }
}

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function pick(o: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}
