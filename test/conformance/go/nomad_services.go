package main

import (
	"fmt"
	"strings"

	nomad "github.com/hashicorp/nomad/api"
)

// catalogJob: two allocations of a docker task "server", a dynamic port "http", a group service "catalog"
// (tags api, v1) and a task service "catalog-admin", both provider "nomad".
func catalogJob() *nomad.Job {
	task := nomad.NewTask("server", "docker").SetConfig("image", "catalog:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Services = []*nomad.Service{{Name: "catalog-admin", PortLabel: "http", Provider: "nomad"}}
	group := nomad.NewTaskGroup("catalog", 2).AddTask(task)
	group.Networks = []*nomad.NetworkResource{{Mode: "host", DynamicPorts: []nomad.Port{{Label: "http"}}}}
	group.Services = []*nomad.Service{{Name: "catalog", PortLabel: "http", Provider: "nomad", Tags: []string{"api", "v1"}}}
	return nomad.NewServiceJob("catalog", "catalog", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// nomadServicesChecks drive native service discovery through the official client: Services().List and Get seeing
// the instances of a running job (at their allocations' host ports), Jobs().Services, Allocations().Services,
// Services().Delete, and the instances going when the job stops.
func nomadServicesChecks(control Control) []Check {
	c := nomadClient()
	services := c.Services()
	return []Check{
		{"nomad-services/register-and-list", func() error {
			before, _, err := services.List(nil)
			if err != nil {
				return err
			}
			if _, _, err := c.Jobs().Register(catalogJob(), nil); err != nil {
				return err
			}
			if err := control.Advance("10s"); err != nil {
				return err
			}
			list, meta, err := services.List(nil)
			if err != nil {
				return err
			}
			if len(list) != 1 {
				return fmt.Errorf("namespaces: %+v", list)
			}
			names := []string{}
			var tags []string
			for _, stub := range list[0].Services {
				names = append(names, stub.ServiceName)
				if stub.ServiceName == "catalog" {
					tags = stub.Tags
				}
			}
			return First(
				Expect(len(before) == 0, "before the job: %+v", before),
				Expect(list[0].Namespace == "default", "namespace %q", list[0].Namespace),
				Expect(strings.Join(names, ",") == "catalog,catalog-admin", "services %v", names),
				Expect(strings.Join(tags, ",") == "api,v1", "tags %v", tags),
				Expect(meta.LastIndex > 1, "index %d", meta.LastIndex),
			)
		}},
		{"nomad-services/get-instances", func() error {
			regs, _, err := services.Get("catalog", nil)
			if err != nil {
				return err
			}
			if len(regs) != 2 {
				return fmt.Errorf("instances: %+v", regs)
			}
			for _, reg := range regs {
				alloc, _, err := c.Allocations().Info(reg.AllocID, nil)
				if err != nil {
					return err
				}
				port := alloc.AllocatedResources.Shared.Ports[0]
				if err := First(
					Expect(reg.ID == fmt.Sprintf("_nomad-task-%s-group-catalog-catalog-http", alloc.ID), "ID %q", reg.ID),
					Expect(reg.Address == port.HostIP && reg.Port == port.Value, "address %s:%d, port %+v", reg.Address, reg.Port, port),
					Expect(reg.JobID == "catalog" && reg.NodeID == alloc.NodeID && reg.Datacenter == "dc1" && reg.Namespace == "default", "registration %+v", reg),
					Expect(strings.Join(reg.Tags, ",") == "api,v1", "tags %v", reg.Tags),
				); err != nil {
					return err
				}
			}
			chosen, _, err := services.Get("catalog", &nomad.QueryOptions{Params: map[string]string{"choose": "1|client-a"}})
			return First(err, Expect(len(chosen) == 1, "chosen: %+v", chosen))
		}},
		{"nomad-services/job-and-alloc-services", func() error {
			byJob, _, err := c.Jobs().Services("catalog", nil)
			if err != nil {
				return err
			}
			if len(byJob) != 4 {
				return fmt.Errorf("job services: %+v", byJob)
			}
			byAlloc, _, err := c.Allocations().Services(byJob[0].AllocID, nil)
			return First(err, Expect(len(byAlloc) == 2, "alloc services: %+v", byAlloc))
		}},
		{"nomad-services/delete", func() error {
			admin, _, err := services.Get("catalog-admin", nil)
			if err != nil {
				return err
			}
			if len(admin) != 2 {
				return fmt.Errorf("catalog-admin: %+v", admin)
			}
			if _, err := services.Delete("catalog-admin", admin[0].ID, nil); err != nil {
				return err
			}
			left, _, err := services.Get("catalog-admin", nil)
			if err != nil {
				return err
			}
			_, again := services.Delete("catalog-admin", admin[0].ID, nil)
			return First(
				Expect(len(left) == 1 && left[0].ID == admin[1].ID, "left: %+v", left),
				Expect(again != nil && strings.Contains(again.Error(), "service registration not found"), "second delete: %v", again),
			)
		}},
		{"nomad-services/deregistered-on-stop", func() error {
			if _, _, err := c.Jobs().Deregister("catalog", false, nil); err != nil {
				return err
			}
			if err := control.Advance("5s"); err != nil {
				return err
			}
			regs, _, err := services.Get("catalog", nil)
			if err != nil {
				return err
			}
			list, _, err := services.List(nil)
			return First(err,
				Expect(len(regs) == 0, "catalog after stop: %+v", regs),
				Expect(len(list) == 0, "list after stop: %+v", list),
			)
		}},
	}
}
