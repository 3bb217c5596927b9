package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

func nomadClient() *nomad.Client {
	client, err := nomad.NewClient(&nomad.Config{Address: os.Getenv("NOMAD_ADDR")})
	if err != nil {
		panic(err)
	}
	return client
}

func ptr[T any](v T) *T { return &v }

func webJob(image string, count int, update *nomad.UpdateStrategy) *nomad.Job {
	task := nomad.NewTask("server", "docker").SetConfig("image", image).Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(128)})
	group := nomad.NewTaskGroup("web", count).AddTask(task)
	group.Update = update
	job := nomad.NewServiceJob("web", "web", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
	return job
}

func batchJob(id string) *nomad.Job {
	task := nomad.NewTask("run", "exec").SetConfig("command", "/bin/true").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	return nomad.NewBatchJob(id, id, "global", 50).AddDatacenter("dc1").AddTaskGroup(nomad.NewTaskGroup("run", 1).AddTask(task))
}

func nomadChecks(control Control) []Check {
	c := nomadClient()
	jobs := c.Jobs()
	latest := func(id string) (*nomad.Deployment, error) {
		d, _, err := jobs.LatestDeployment(id, nil)
		if err == nil && d == nil {
			err = fmt.Errorf("no deployment for %s", id)
		}
		return d, err
	}
	return []Check{
		{"nomad/register-and-run", func() error {
			resp, _, err := jobs.Register(webJob("nginx:1.25", 2, nil), nil)
			if err := First(err, Expect(resp != nil && resp.EvalID != "", "register: %+v", resp)); err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			allocs, _, err := jobs.Allocations("web", false, nil)
			running := 0
			for _, a := range allocs {
				if a.ClientStatus == "running" {
					running++
				}
			}
			if err := First(err, Expect(running == 2, "running allocations: %d of %d", running, len(allocs))); err != nil {
				return err
			}
			d, err := latest("web")
			return First(err, Expect(d != nil && d.Status == "successful", "deployment: %+v", d))
		}},
		{"nomad/canary-and-promotion", func() error {
			update := &nomad.UpdateStrategy{Canary: ptr(1), MaxParallel: ptr(1), AutoPromote: ptr(false), MinHealthyTime: ptr(10 * time.Second)}
			if _, _, err := jobs.Register(webJob("nginx:1.26", 2, update), nil); err != nil {
				return err
			}
			if err := control.Advance("30s"); err != nil {
				return err
			}
			d, err := latest("web")
			if err != nil {
				return err
			}
			state := d.TaskGroups["web"]
			if err := Expect(d.Status == "running" && state != nil && state.DesiredCanaries == 1 && len(state.PlacedCanaries) == 1 && d.StatusDescription == "Deployment is running but requires manual promotion", "before promotion: %s %q %+v", d.Status, d.StatusDescription, state); err != nil {
				return err
			}
			if _, _, err := c.Deployments().PromoteAll(d.ID, nil); err != nil {
				return err
			}
			if err := control.Advance("2m"); err != nil {
				return err
			}
			after, _, err := c.Deployments().Info(d.ID, nil)
			if err := First(err, Expect(after.Status == "successful", "after promotion: %s %q", after.Status, after.StatusDescription)); err != nil {
				return err
			}
			job, _, err := jobs.Info("web", nil)
			return First(err, Expect(*job.Version == 1 && *job.Stable, "job after promotion: version %d stable %v", *job.Version, *job.Stable))
		}},
		{"nomad/plan-with-diff", func() error {
			plan, _, err := jobs.Plan(webJob("nginx:1.26", 3, &nomad.UpdateStrategy{Canary: ptr(1), MaxParallel: ptr(1), AutoPromote: ptr(false), MinHealthyTime: ptr(10 * time.Second)}), true, nil)
			if err != nil {
				return err
			}
			if err := Expect(plan.Diff != nil && plan.Diff.Type == "Edited", "diff: %+v", plan.Diff); err != nil {
				return err
			}
			updates := plan.Annotations.DesiredTGUpdates["web"]
			return Expect(updates != nil && updates.Place == 1, "DesiredTGUpdates: %+v", updates)
		}},
		{"nomad/revert", func() error {
			resp, _, err := jobs.Revert("web", 0, nil, nil, "", "")
			if err := First(err, Expect(resp != nil && resp.EvalID != "", "revert: %+v", resp)); err != nil {
				return err
			}
			job, _, err := jobs.Info("web", nil)
			if err != nil {
				return err
			}
			image := job.TaskGroups[0].Tasks[0].Config["image"]
			return Expect(*job.Version == 2 && image == "nginx:1.25", "after revert: version %d image %v", *job.Version, image)
		}},
		{"nomad/dispatch", func() error {
			job := batchJob("report")
			job.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: "optional", MetaRequired: []string{"customer"}}
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			resp, _, err := jobs.Dispatch("report", map[string]string{"customer": "acme"}, []byte("hello"), "", nil)
			if err := First(err, Expect(resp != nil && strings.HasPrefix(resp.DispatchedJobID, "report/dispatch-") && resp.EvalID != "", "dispatch: %+v", resp)); err != nil {
				return err
			}
			child, _, err := jobs.Info(resp.DispatchedJobID, nil)
			return First(err, Expect(child.Meta["customer"] == "acme" && *child.ParentID == "report", "child: %+v", child.Meta))
		}},
		{"nomad/periodic-force", func() error {
			job := batchJob("nightly")
			job.Periodic = &nomad.PeriodicConfig{Spec: ptr("0 3 * * *"), ProhibitOverlap: ptr(true)}
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			evalID, _, err := jobs.PeriodicForce("nightly", nil)
			if err := First(err, Expect(evalID != "", "no eval")); err != nil {
				return err
			}
			children, _, err := jobs.PrefixList("nightly/periodic-")
			return First(err, Expect(len(children) == 1, "children: %d", len(children)))
		}},
		{"nomad/scale-and-status", func() error {
			resp, _, err := jobs.Scale("web", "web", ptr(3), "more capacity", false, nil, nil)
			if err := First(err, Expect(resp != nil && resp.EvalID != "", "scale: %+v", resp)); err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			status, _, err := jobs.ScaleStatus("web", nil)
			if err != nil {
				return err
			}
			group := status.TaskGroups["web"]
			return Expect(group.Desired == 3 && group.Running == 3 && group.Placed == 3, "scale status: %+v", group)
		}},
		{"nomad/scale-events", func() error {
			status, _, err := jobs.ScaleStatus("web", nil)
			if err != nil {
				return err
			}
			events := status.TaskGroups["web"].Events
			return Expect(len(events) == 1 && events[0].Count != nil && *events[0].Count == 3 && events[0].PreviousCount == 2 && events[0].Message == "more capacity" && events[0].EvalID != nil, "scaling events: %+v", events)
		}},
		{"nomad/filter-and-pagination", func() error {
			for i := 0; i < 5; i++ {
				job := batchJob(fmt.Sprintf("batch-%d", i))
				job.Meta = map[string]string{"team": map[bool]string{true: "a", false: "b"}[i%2 == 0]}
				if _, _, err := jobs.Register(job, nil); err != nil {
					return err
				}
			}
			var seen []string
			token := ""
			for pages := 0; pages < 10; pages++ {
				list, meta, err := jobs.List(&nomad.QueryOptions{Filter: `Meta.team == "a"`, PerPage: 2, NextToken: token, Prefix: "batch-"})
				if err != nil {
					return err
				}
				for _, j := range list {
					seen = append(seen, j.ID)
				}
				if meta.NextToken == "" {
					break
				}
				token = meta.NextToken
			}
			return Expect(strings.Join(seen, ",") == "batch-0,batch-2,batch-4", "filtered pages: %v", seen)
		}},
		{"nomad/blocking-query", func() error {
			_, meta, err := jobs.Info("web", nil)
			if err != nil {
				return err
			}
			woke := make(chan uint64, 1)
			go func() {
				_, m, err := jobs.Info("web", &nomad.QueryOptions{WaitIndex: meta.LastIndex, WaitTime: 60 * time.Second})
				if err != nil {
					woke <- 0
					return
				}
				woke <- m.LastIndex
			}()
			job, _, _ := jobs.Info("web", nil)
			job.Meta = map[string]string{"touched": "yes"}
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			select {
			case index := <-woke:
				return Expect(index > meta.LastIndex, "woke at index %d, was %d", index, meta.LastIndex)
			case <-time.After(60 * time.Second):
				return fmt.Errorf("a blocking job read did not wake on a register")
			}
		}},
		{"nomad/event-stream", func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicJob: {"streamed"}}, 0, nil)
			if err != nil {
				return err
			}
			if _, _, err := jobs.Register(batchJob("streamed"), nil); err != nil {
				return err
			}
			for events := range stream {
				if events.Err != nil {
					return events.Err
				}
				for _, e := range events.Events {
					if e.Type == "JobRegistered" && e.Key == "streamed" {
						job, err := e.Job()
						return First(err, Expect(job != nil && *job.ID == "streamed", "event payload: %+v", job))
					}
				}
			}
			return fmt.Errorf("no JobRegistered event for the job")
		}},
		{"nomad/node-eligibility", func() error {
			nodes, _, err := c.Nodes().List(nil)
			if err != nil || len(nodes) == 0 {
				return fmt.Errorf("nodes: %v %v", nodes, err)
			}
			resp, err := c.Nodes().ToggleEligibility(nodes[0].ID, false, nil)
			if err := First(err, Expect(resp != nil && resp.NodeModifyIndex > 0, "eligibility: %+v", resp)); err != nil {
				return err
			}
			node, _, err := c.Nodes().Info(nodes[0].ID, nil)
			if err := First(err, Expect(node.SchedulingEligibility == "ineligible", "node: %s", node.SchedulingEligibility)); err != nil {
				return err
			}
			_, err = c.Nodes().ToggleEligibility(nodes[0].ID, true, nil)
			return err
		}},
		{"nomad/node-drain", func() error {
			nodes, _, err := c.Nodes().List(nil)
			if err != nil || len(nodes) == 0 {
				return fmt.Errorf("nodes: %v %v", nodes, err)
			}
			if _, err := c.Nodes().UpdateDrain(nodes[0].ID, &nomad.DrainSpec{Deadline: time.Hour}, false, nil); err != nil {
				return err
			}
			if err := control.Advance("10m"); err != nil {
				return err
			}
			node, _, err := c.Nodes().Info(nodes[0].ID, nil)
			if err != nil {
				return err
			}
			return Expect(node.DrainStrategy == nil && node.LastDrain != nil && node.LastDrain.Status == "complete" && node.SchedulingEligibility == "ineligible", "after the drain: %+v %+v", node.DrainStrategy, node.LastDrain)
		}},
	}
}

// runningAlloc registers the job, moves the virtual clock 5 s (placement and start) and returns
// one of its running allocations in full.
func runningAlloc(c *nomad.Client, control Control, job *nomad.Job) (*nomad.Allocation, error) {
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		return nil, err
	}
	if err := control.Advance("5s"); err != nil {
		return nil, err
	}
	stubs, _, err := c.Jobs().Allocations(*job.ID, false, nil)
	if err != nil {
		return nil, err
	}
	for _, stub := range stubs {
		if stub.ClientStatus == "running" {
			alloc, _, err := c.Allocations().Info(stub.ID, nil)
			return alloc, err
		}
	}
	return nil, fmt.Errorf("no running allocation of %s: %d allocations", *job.ID, len(stubs))
}
