/**
 * A fixture's `registry.services`: service instances (and their checks)
 * registered at start or by a fixture applied later, through the same state
 * methods as `PUT /v1/catalog/register`, so they live in the store's tables
 * (state hash, snapshots and the tape need nothing of their own).
 */
import type { RegistryServiceFixture } from "../scenario-files/schema.js";
import { checkRow } from "./catalog.js";
import type { RegistryState } from "./state.js";

/**
 * Runs inside the fixture's write, a step per instance (see ServiceInstance.fixtureSteps); an
 * instance on a node the catalog does not have is the fixture's error.
 */
export function* fixtureServiceSteps(state: RegistryState, services: readonly RegistryServiceFixture[], agentNode: () => string): Generator<void, void, undefined> {
  for (const [i, service] of services.entries()) {
    const nodeName = service.Node ?? agentNode();
    const node = state.findNode(nodeName);
    if (!node) throw new Error(`registry.services[${i}].Node: no node "${nodeName}" (list it in registry.nodes, or leave Node out for the agent's node)`);
    const id = service.ID ?? service.Name;
    state.putService({
      Node: node.Node,
      Kind: "",
      ID: id,
      Service: service.Name,
      Tags: [...(service.Tags ?? [])],
      Address: service.Address ?? "",
      TaggedAddresses: service.TaggedAddresses ? Object.fromEntries(Object.entries(service.TaggedAddresses).map(([k, a]) => [k, { Address: a.Address, Port: a.Port ?? 0 }])) : null,
      Meta: { ...(service.Meta ?? {}) },
      Port: service.Port ?? 0,
      SocketPath: "",
      Weights: service.Weights ?? { Passing: 1, Warning: 1 },
      EnableTagOverride: service.EnableTagOverride ?? false,
    });
    const checks = service.Checks ?? [];
    checks.forEach((check, n) => {
      // A Consul agent's IDs for a service's checks: `service:<id>`, numbered from 1 when there are several.
      const checkId = check.CheckID ?? (checks.length > 1 ? `service:${id}:${n + 1}` : `service:${id}`);
      state.putCheck(
        checkRow({
          Node: node.Node,
          CheckID: checkId,
          Name: check.Name ?? `Service '${service.Name}' check`,
          Status: check.Status,
          Notes: check.Notes,
          Output: check.Output,
          ServiceID: id,
        }),
      );
    });
    yield;
  }
}
