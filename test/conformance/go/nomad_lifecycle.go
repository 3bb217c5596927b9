package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// Defects the official client found in a job's lifecycle (issue 31 §3): manual
// health, dispatch ID templates, and the order of a stop's events.
func nomadLifecycleChecks(control Control) []Check {
	c := nomadClient()
	jobs := c.Jobs()
	return []Check{
		{"nomad-lifecycle/manual-health-waits-for-set-alloc-health", func() error {
			job := webJob("nginx:1.25", 1, &nomad.UpdateStrategy{HealthCheck: ptr("manual"), MaxParallel: ptr(1), MinHealthyTime: ptr(time.Second), HealthyDeadline: ptr(time.Minute)})
			job.ID, job.Name = ptr("manual"), ptr("manual")
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			// Past min_healthy_time and healthy_deadline: nobody reported, so no health and no verdict.
			if err := control.Advance("5m"); err != nil {
				return err
			}
			d, _, err := jobs.LatestDeployment("manual", nil)
			if err := First(err, Expect(d != nil && d.Status == "running", "deployment before the report: %+v", d)); err != nil {
				return err
			}
			stubs, _, err := c.Deployments().Allocations(d.ID, nil)
			if err := First(err, Expect(len(stubs) == 1 && stubs[0].ClientStatus == "running", "allocations: %d", len(stubs))); err != nil {
				return err
			}
			if status := stubs[0].DeploymentStatus; status != nil && status.Healthy != nil {
				return fmt.Errorf("health set without a report: %v", *status.Healthy)
			}
			if _, _, err := c.Deployments().SetAllocHealth(d.ID, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "must specify at least one healthy/unhealthy allocation ID") {
				return fmt.Errorf("an empty report: %v", err)
			}
			resp, _, err := c.Deployments().SetAllocHealth(d.ID, []string{stubs[0].ID}, nil, nil)
			if err := First(err, Expect(resp != nil && resp.EvalID != "", "report: %+v", resp)); err != nil {
				return err
			}
			if err := control.Advance("1s"); err != nil {
				return err
			}
			after, _, err := c.Deployments().Info(d.ID, nil)
			return First(err, Expect(after.Status == "successful", "after the report: %s %q", after.Status, after.StatusDescription))
		}},
		{"nomad-lifecycle/dispatch-id-prefix-template", func() error {
			job := batchJob("templated")
			job.ParameterizedJob = &nomad.ParameterizedJobConfig{Payload: "optional"}
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			resp, _, err := jobs.Dispatch("templated", nil, nil, "eu-run", nil)
			if err != nil {
				return err
			}
			if !regexp.MustCompile(`^templated/dispatch-eu-run-\d+-[0-9a-f]{8}$`).MatchString(resp.DispatchedJobID) {
				return fmt.Errorf("dispatched ID %q", resp.DispatchedJobID)
			}
			child, _, err := jobs.Info(resp.DispatchedJobID, nil)
			return First(err, Expect(*child.ParentID == "templated" && *child.Name == resp.DispatchedJobID, "child: %s %s", *child.ParentID, *child.Name))
		}},
		{"nomad-lifecycle/stop-events-plan-then-client", func() error {
			job := webJob("nginx:1.25", 1, nil)
			job.ID, job.Name = ptr("stopped"), ptr("stopped")
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			if err := control.Advance("5s"); err != nil {
				return err
			}
			_, meta, err := jobs.Deregister("stopped", false, nil)
			if err != nil {
				return err
			}
			if err := control.Advance("1s"); err != nil {
				return err
			}
			// Replayed from the stop's own index: what a consumer following the job's allocations sees.
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			stream, err := c.EventStream().Stream(ctx, map[nomad.Topic][]string{nomad.TopicAllocation: {"*"}}, meta.LastIndex, nil)
			if err != nil {
				return err
			}
			var seen []string
			for events := range stream {
				if events.Err != nil {
					return events.Err
				}
				for _, e := range events.Events {
					alloc, err := e.Allocation()
					if err != nil || alloc == nil || alloc.JobID != "stopped" {
						continue
					}
					seen = append(seen, fmt.Sprintf("%s %s/%s", e.Type, alloc.DesiredStatus, alloc.ClientStatus))
					if alloc.ClientStatus == "complete" {
						want := []string{"PlanResult stop/running", "AllocationUpdated stop/complete"}
						return Expect(fmt.Sprint(seen) == fmt.Sprint(want), "allocation events: %v, want %v", seen, want)
					}
				}
			}
			return fmt.Errorf("the allocation never completed: %v", seen)
		}},
	}
}
