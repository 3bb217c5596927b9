/** Namespaces: the list (`/v1/namespaces`), one namespace, create/update and delete. */
import { badRequest, field, invalidMethod, jsonBody, ReadError, serverError, typedField, Write, type NomadRouter } from "../http/nomad-http.js";
import { namespaceView, TABLES, type JobRow } from "../state/model.js";
import { only, str } from "./helpers.js";
import type { RouteKit } from "./kit.js";

export function registerNamespaceRoutes(router: NomadRouter, { state, ctx, settings, read }: RouteKit): void {
  router.exact("/v1/namespaces", (rc) => {
    only(rc, "GET");
    return read(rc, [TABLES.namespaces], () =>
      state.namespaces
        .sorted()
        .filter((n) => n.Name.startsWith(rc.options.prefix) && rc.acl.anyInNamespace(n.Name))
        .map(namespaceView),
    );
  });
  router.exact("/v1/namespace", async (rc) => {
    only(rc, "PUT", "POST");
    const body = await jsonBody(rc);
    const name = str(field(body, "Name"));
    if (!name) throw badRequest("Missing Namespace Name");
    return upsertNamespace(name, body);
  });
  router.prefix("/v1/namespace/", async (rc) => {
    const name = rc.rest;
    if (rc.method === "GET") {
      return read(rc, [TABLES.namespaces], () => {
        const ns = state.namespaces.get(name);
        if (!ns) throw new ReadError(404, "Namespace not found", state.index(TABLES.namespaces));
        return namespaceView(ns);
      });
    }
    if (rc.method === "PUT" || rc.method === "POST") {
      const body = await jsonBody(rc);
      if (str(field(body, "Name")) !== name) throw badRequest("Namespace name does not match request path");
      return upsertNamespace(name, body);
    }
    if (rc.method === "DELETE") {
      if (name === "default") throw serverError("can not delete default namespace");
      const live = [...state.jobs.values()].some((j: JobRow) => j.Namespace === name && j.Status !== "dead");
      if (live) throw serverError(`namespace "${name}" has non-terminal jobs in regions: [${settings().region}]`);
      const index = ctx.store.write(() => {
        state.namespaces.delete(name);
        return ctx.store.writeIndex();
      });
      return new Write(undefined, index);
    }
    throw invalidMethod();
  });

  function upsertNamespace(name: string, body: unknown) {
    const description = typedField(body, "Namespace", "Description", "string");
    const quota = typedField(body, "Namespace", "Quota", "string");
    const meta = typedField(body, "Namespace", "Meta", "map[string]string");
    const index = ctx.store.write(() => {
      const existing = state.namespaces.get(name);
      state.namespaces.putIndexed(name, {
        Name: name,
        Description: description || existing?.Description || "",
        Quota: quota || existing?.Quota || "",
        Meta: meta ?? existing?.Meta ?? null,
      });
      return ctx.store.writeIndex();
    });
    return new Write(undefined, index);
  }
}
