package main

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// checkedJob: one allocation of a docker task "server" with a dynamic port "http", a group service "storefront"
// with an http check every 10s and a task service "storefront-admin" with a tcp readiness check every 4s.
func checkedJob() *nomad.Job {
	task := nomad.NewTask("server", "docker").SetConfig("image", "storefront:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	task.Services = []*nomad.Service{{Name: "storefront-admin", PortLabel: "http", Provider: "nomad",
		Checks: []nomad.ServiceCheck{{Name: "admin-port", Type: "tcp", Interval: 4 * time.Second, Timeout: time.Second, OnUpdate: "ignore"}}}}
	group := nomad.NewTaskGroup("storefront", 1).AddTask(task)
	group.Networks = []*nomad.NetworkResource{{Mode: "host", DynamicPorts: []nomad.Port{{Label: "http"}}}}
	group.Services = []*nomad.Service{{Name: "storefront", PortLabel: "http", Provider: "nomad",
		Checks: []nomad.ServiceCheck{{Name: "alive", Type: "http", Path: "/health", Interval: 10 * time.Second, Timeout: 2 * time.Second}}}}
	return nomad.NewServiceJob("storefront", "storefront", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// nomadServicesChecks drive native service discovery through the official client: Services().List and Get seeing
// the instances of a running job (at their allocations' host ports), Jobs().Services, Allocations().Services,
// Services().Delete, the instances going when the job stops, Allocations().Checks on a job with native checks,
// and the event stream's Service topic.
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
		{"nomad-services/alloc-checks", func() error {
			alloc, err := runningAlloc(c, control, checkedJob())
			if err != nil {
				return err
			}
			if err := control.Advance("10s"); err != nil {
				return err
			}
			results, err := c.Allocations().Checks(alloc.ID, nil)
			if err != nil {
				return err
			}
			if len(results) != 2 {
				return fmt.Errorf("results: %+v", results)
			}
			var http, tcp nomad.AllocCheckStatus
			for id, result := range results {
				if id != result.ID {
					return fmt.Errorf("key %q holds %+v", id, result)
				}
				switch result.Check {
				case "alive":
					http = result
				case "admin-port":
					tcp = result
				}
			}
			_, unknown := c.Allocations().Checks("d3e34248-4843-be75-d4fd-4899975cfb38", nil)
			return First(
				Expect(len(http.ID) == 32, "check ID %q", http.ID),
				Expect(http.Status == "success" && http.Mode == "healthiness" && http.StatusCode == 200 && http.Output == "nomad: http ok", "http check: %+v", http),
				Expect(http.Group == alloc.Name && http.Service == "storefront" && http.Task == "" && http.Timestamp > 0, "http check: %+v", http),
				Expect(tcp.Status == "success" && tcp.Mode == "readiness" && tcp.Output == "nomad: tcp ok" && tcp.Task == "server" && tcp.Service == "storefront-admin", "tcp check: %+v", tcp),
				Expect(unknown != nil && strings.Contains(unknown.Error(), "404") && strings.Contains(unknown.Error(), "Unknown allocation"), "unknown allocation: %v", unknown),
			)
		}},
		{"nomad-services/event-stream-service-topic", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			// Keyed by job: the registrations already made are replayed from the buffer, then the stop's removals follow.
			stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicService: {"storefront"}}, 0, nil)
			if err != nil {
				return err
			}
			registered := map[string]bool{}
			stopped := false
			for events := range stream {
				if events.Err != nil {
					return events.Err
				}
				for _, e := range events.Events {
					reg, err := e.Service()
					if err != nil {
						return err
					}
					if e.Topic != nomad.TopicService || reg == nil || reg.JobID != "storefront" || reg.ID != e.Key {
						return fmt.Errorf("event %s %s %s: %+v", e.Topic, e.Type, e.Key, reg)
					}
					switch e.Type {
					case "ServiceRegistration":
						registered[reg.ServiceName] = true
					case "ServiceDeregistration":
						delete(registered, reg.ServiceName)
						if stopped && len(registered) == 0 {
							return nil
						}
					default:
						return fmt.Errorf("event type %q", e.Type)
					}
				}
				if !stopped && registered["storefront"] && registered["storefront-admin"] {
					stopped = true
					if _, _, err := c.Jobs().Deregister("storefront", false, nil); err != nil {
						return err
					}
					if err := control.Advance("5s"); err != nil {
						return err
					}
				}
			}
			return fmt.Errorf("the stream ended: registered %v, stopped %v", registered, stopped)
		}},
	}
}
