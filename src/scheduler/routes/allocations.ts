/** Allocations: the list (`/v1/allocations`), one allocation, and stopping one (with node operations). */
import { allocationFilterDatum } from "../state/filter-datum.js";
import { permissionDenied } from "../acl/acl-routes.js";
import { goQuote } from "../../core/go/strconv.js";
import { NomadError, parseGoBool, ReadError, serverError, Write, type NomadRouter } from "../http/nomad-http.js";
import { allocStub, allocView, allocWire, TABLES, versionKey } from "../state/model.js";
import { inNamespace, only } from "./helpers.js";
import type { RouteKit } from "./kit.js";
import { byPrefixOrCreate, createListTokenizer } from "./reads.js";
import { allocationServices } from "./services.js";
import { allocChecks } from "./alloc-actions.js";

export function registerAllocationRoutes(router: NomadRouter, kit: RouteKit): void {
  const { state, nodeOps, read, objectIndex, readList } = kit;
  router.exact("/v1/allocations", (rc) => {
    only(rc, "GET");
    return readList(
      rc,
      [TABLES.allocs],
      () =>
        byPrefixOrCreate(
          rc,
          [...state.allocs.values()].filter((a) => inNamespace(rc, a.Namespace)),
        ),
      createListTokenizer(rc),
      allocStub,
      // the allocation's own job (the version it was placed with), as GET /v1/allocation/:id shows it
      (a) => allocationFilterDatum(allocView(a, state.versions.get(versionKey(a.Namespace, a.JobID, a.JobVersion)) ?? state.job(a.Namespace, a.JobID))),
    );
  });

  router.prefix("/v1/allocation/", (rc) => {
    const [allocId, action] = rc.rest.split("/", 2) as [string, string | undefined];
    if (nodeOps && action === "stop") {
      only(rc, "PUT", "POST");
      const flag = rc.query.get("no_shutdown_delay") ?? "";
      const noShutdownDelay = flag === "" ? false : parseGoBool(flag);
      if (noShutdownDelay === undefined) throw serverError(`no_shutdown_delay value is not a boolean: strconv.ParseBool: parsing ${goQuote(flag)}: invalid syntax`);
      const alloc = state.allocs.get(allocId);
      if (!alloc) throw new NomadError(404, "allocation not found");
      if (!rc.acl.allowNamespace(alloc.Namespace, "alloc-lifecycle")) throw permissionDenied();
      const result = nodeOps.stopAllocation(alloc, noShutdownDelay);
      return new Write(result, result.Index);
    }
    if (action === "services") return allocationServices(kit, rc, allocId);
    if (action === "checks") return allocChecks(kit, rc, allocId);
    only(rc, "GET");
    return read(
      rc,
      [TABLES.allocs],
      () => {
        const alloc = state.allocs.get(rc.rest);
        if (!alloc) throw new ReadError(404, "alloc not found", state.index(TABLES.allocs));
        // Checked in the allocation's own namespace (Nomad's GetAlloc answers as if it did not exist).
        if (!rc.acl.allowNamespace(alloc.Namespace, "read-job")) throw new NomadError(404, `Unknown allocation "${rc.rest}"`);
        return allocWire(alloc, state.versions.get(versionKey(alloc.Namespace, alloc.JobID, alloc.JobVersion)) ?? state.job(alloc.Namespace, alloc.JobID));
      },
      objectIndex(TABLES.allocs, () => state.allocs.get(rc.rest)),
    );
  });
}
