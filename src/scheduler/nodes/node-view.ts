/**
 * A node as Nomad's API shows it (`GET /v1/node/:id`, node events): the
 * stored row with its resources and networks laid out as structs.Node.
 * Apart from model.ts because the networks come from network.ts, which
 * reads the model's rows.
 */
import { legacyResources, type Json, type NodeRow } from "../state/model.js";
import { networksOf } from "../state/network.js";

export function nodeView(n: NodeRow): Json {
  const { CpuShares, MemoryMB, StatusUpdatedAt, NodeNetworks: _nn, TaskNetworks: _tn, MinDynamicPort: _min, MaxDynamicPort: _max, ReservedHostPorts: _rhp, ...rest } = n;
  const networks = networksOf(n);
  return {
    ...rest,
    SecretID: "",
    // The client's cgroup_parent default on cgroups v2 Linux (the only kind of node standin simulates).
    CgroupParent: "nomad.slice",
    NodeResources: {
      Cpu: { CpuShares, TotalCpuCores: 0, ReservableCpuCores: null },
      Memory: { MemoryMB },
      Disk: { DiskMB: 100000 },
      Networks: networks.TaskNetworks,
      NodeNetworks: networks.NodeNetworks,
      Devices: null,
      MinDynamicPort: networks.MinDynamicPort,
      MaxDynamicPort: networks.MaxDynamicPort,
    },
    ReservedResources: { Cpu: { CpuShares: 0 }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: networks.ReservedHostPorts } },
    Resources: legacyResources(CpuShares, MemoryMB, 100000),
    // The client's `reserved` block, none configured: every field zero.
    Reserved: legacyResources(0, 0, 0),
    StatusUpdatedAt: Math.floor(StatusUpdatedAt / 1000),
  };
}
