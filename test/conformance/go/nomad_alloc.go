package main

import (
	"fmt"
	"strings"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

// lifeJob: one docker task "app" (100 MHz, 64 MB) in group "life".
func lifeJob() *nomad.Job {
	task := nomad.NewTask("app", "docker").SetConfig("image", "life:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	group := nomad.NewTaskGroup("life", 1).AddTask(task)
	return nomad.NewServiceJob("life", "life", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// wantError: the call failed with a message holding want.
func wantError(err error, want string) error {
	if err == nil {
		return fmt.Errorf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		return fmt.Errorf("error %q, want %q", err.Error(), want)
	}
	return nil
}

// crashJob: batch job "crash" whose task "app" is never restarted (restart attempts 0), so a task
// failure fails the allocation; the batch reschedule defaults (1 attempt in 24h, constant 5s) apply.
func crashJob() *nomad.Job {
	task := nomad.NewTask("app", "docker").SetConfig("image", "crash:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	group := nomad.NewTaskGroup("crash", 1).AddTask(task)
	group.RestartPolicy = &nomad.RestartPolicy{Attempts: ptr(0), Interval: ptr(time.Minute), Delay: ptr(5 * time.Second), Mode: ptr("fail")}
	job := nomad.NewBatchJob("crash", "crash", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
	job.SetMeta("standin.batch_run", "1h")
	return job
}

// rescheduleCheck: a task fails, the client does not restart it, the allocation fails and the
// server reschedules it after the policy's delay; the official client reads the follow-up
// evaluation, NextAllocation and the replacement's RescheduleTracker.
func rescheduleCheck(c *nomad.Client, control Control) error {
	alloc, err := runningAlloc(c, control, crashJob())
	if err != nil {
		return err
	}
	if _, err := control.Post("/_standin/actions", map[string]string{"do": "task-fail", "alloc": alloc.ID}); err != nil {
		return err
	}
	if err := control.Advance("1s"); err != nil {
		return err
	}
	failed, _, err := c.Allocations().Info(alloc.ID, nil)
	if err != nil {
		return err
	}
	app := failed.TaskStates["app"]
	if failed.ClientStatus != "failed" || failed.FollowupEvalID == "" || app == nil || !app.Failed {
		return fmt.Errorf("failed alloc: status %q, follow-up %q, app %+v", failed.ClientStatus, failed.FollowupEvalID, app)
	}
	if last := app.Events[len(app.Events)-1]; last.Type != "Not Restarting" || last.DisplayMessage != "Policy allows no restarts" || !last.FailsTask {
		return fmt.Errorf("last task event %q %q", last.Type, last.DisplayMessage)
	}
	followUp, _, err := c.Evaluations().Info(failed.FollowupEvalID, nil)
	if err != nil {
		return err
	}
	if followUp.TriggeredBy != "alloc-failure" || followUp.Status != "pending" || followUp.StatusDescription != "created for delayed rescheduling" || followUp.JobID != "crash" {
		return fmt.Errorf("follow-up eval %q %q %q %q", followUp.TriggeredBy, followUp.Status, followUp.StatusDescription, followUp.JobID)
	}
	if !followUp.WaitUntil.Equal(app.FinishedAt.Add(5 * time.Second)) {
		return fmt.Errorf("follow-up waits until %v, the task finished at %v", followUp.WaitUntil, app.FinishedAt)
	}
	if err := control.Advance("5s"); err != nil {
		return err
	}
	rescheduled, _, err := c.Allocations().Info(alloc.ID, nil)
	if err != nil {
		return err
	}
	if rescheduled.NextAllocation == "" || rescheduled.DesiredStatus != "stop" || rescheduled.DesiredDescription != "alloc was rescheduled because it failed" {
		return fmt.Errorf("rescheduled alloc: next %q, %q %q", rescheduled.NextAllocation, rescheduled.DesiredStatus, rescheduled.DesiredDescription)
	}
	next, _, err := c.Allocations().Info(rescheduled.NextAllocation, nil)
	if err != nil {
		return err
	}
	tracker := next.RescheduleTracker
	if next.PreviousAllocation != alloc.ID || tracker == nil || len(tracker.Events) != 1 || tracker.LastReschedule != "ok" {
		return fmt.Errorf("replacement: previous %q, tracker %+v", next.PreviousAllocation, tracker)
	}
	event := tracker.Events[0]
	if event.PrevAllocID != alloc.ID || event.PrevNodeID != alloc.NodeID || event.RescheduleTime != followUp.WaitUntil.UnixNano() {
		return fmt.Errorf("reschedule event %+v, want the previous alloc, at %d (api.RescheduleEvent has no Delay)", event, followUp.WaitUntil.UnixNano())
	}
	done, _, err := c.Evaluations().Info(followUp.ID, nil)
	if err != nil {
		return err
	}
	if done.Status != "complete" {
		return fmt.Errorf("follow-up eval after it ran: %q", done.Status)
	}
	return nil
}

// rollJob: service job "roll" whose group is progress based (update block, progress_deadline 2m)
// and reschedulable (3 attempts, constant 5s), so the deployment watcher lets a failed allocation
// be rescheduled within its deployment instead of failing the deployment.
func rollJob() *nomad.Job {
	task := nomad.NewTask("app", "docker").SetConfig("image", "roll:1").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
	group := nomad.NewTaskGroup("roll", 1).AddTask(task)
	group.Update = &nomad.UpdateStrategy{MaxParallel: ptr(1), MinHealthyTime: ptr(10 * time.Second), HealthyDeadline: ptr(time.Minute), ProgressDeadline: ptr(2 * time.Minute)}
	group.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(3), Interval: ptr(time.Hour), Delay: ptr(5 * time.Second), DelayFunction: ptr("constant"), Unlimited: ptr(false)}
	return nomad.NewServiceJob("roll", "roll", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// deploymentRescheduleCheck: an allocation of an active, progress-based deployment fails; the
// official client sees it marked DesiredTransition.Reschedule with the deployment still running,
// then its replacement in the same deployment, which then succeeds.
func deploymentRescheduleCheck(c *nomad.Client, control Control) error {
	alloc, err := runningAlloc(c, control, rollJob())
	if err != nil {
		return err
	}
	if _, err := control.Post("/_standin/actions", map[string]string{"do": "alloc-fail", "alloc": alloc.ID}); err != nil {
		return err
	}
	failed, _, err := c.Allocations().Info(alloc.ID, nil)
	if err != nil {
		return err
	}
	if failed.ClientStatus != "failed" || failed.DesiredTransition.Reschedule == nil || !*failed.DesiredTransition.Reschedule {
		return fmt.Errorf("failed alloc: status %q, desired transition %+v", failed.ClientStatus, failed.DesiredTransition)
	}
	if failed.DeploymentStatus == nil || failed.DeploymentStatus.Healthy == nil || *failed.DeploymentStatus.Healthy {
		return fmt.Errorf("failed alloc's deployment status %+v", failed.DeploymentStatus)
	}
	deployment, _, err := c.Deployments().Info(alloc.DeploymentID, nil)
	if err != nil {
		return err
	}
	if deployment.Status != "running" {
		return fmt.Errorf("deployment after the failure: %q %q", deployment.Status, deployment.StatusDescription)
	}
	if err := control.Advance("6s"); err != nil {
		return err
	}
	rescheduled, _, err := c.Allocations().Info(alloc.ID, nil)
	if err != nil {
		return err
	}
	next, _, err := c.Allocations().Info(rescheduled.NextAllocation, nil)
	if err != nil {
		return fmt.Errorf("replacement %q: %w", rescheduled.NextAllocation, err)
	}
	if next.DeploymentID != alloc.DeploymentID || next.PreviousAllocation != alloc.ID || next.ClientStatus != "running" {
		return fmt.Errorf("replacement: deployment %q (want %q), previous %q, %q", next.DeploymentID, alloc.DeploymentID, next.PreviousAllocation, next.ClientStatus)
	}
	if err := control.Advance("11s"); err != nil {
		return err
	}
	deployment, _, err = c.Deployments().Info(alloc.DeploymentID, nil)
	if err != nil {
		return err
	}
	group := deployment.TaskGroups["roll"]
	if deployment.Status != "successful" || group == nil || group.PlacedAllocs != 2 || group.HealthyAllocs != 1 || group.UnhealthyAllocs != 1 {
		return fmt.Errorf("deployment at the end: %q, group %+v", deployment.Status, group)
	}
	return nil
}

// burstJob: service job "burst" of four small allocations, rescheduled 5s after a failure (constant).
func burstJob() *nomad.Job {
	task := nomad.NewTask("app", "docker").SetConfig("image", "burst:1").Require(&nomad.Resources{CPU: ptr(10), MemoryMB: ptr(10)})
	group := nomad.NewTaskGroup("burst", 4).AddTask(task)
	group.ReschedulePolicy = &nomad.ReschedulePolicy{Attempts: ptr(1), Interval: ptr(time.Hour), Delay: ptr(5 * time.Second), DelayFunction: ptr("constant"), MaxDelay: ptr(time.Duration(0)), Unlimited: ptr(false)}
	return nomad.NewServiceJob("burst", "burst", "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
}

// failureBurstCheck: the four allocations of one job fail at once, making four alloc-failure
// evaluations. The eval broker runs one evaluation of a job at a time: the first runs, the two
// queued behind it but the newest are canceled when it is acked (Nomad 1.4.3+), the newest runs;
// the official client reads the canceled ones, and all four are replaced.
func failureBurstCheck(c *nomad.Client, control Control) error {
	if _, _, err := c.Jobs().Register(burstJob(), nil); err != nil {
		return err
	}
	if err := control.Advance("5s"); err != nil {
		return err
	}
	stubs, _, err := c.Jobs().Allocations("burst", false, nil)
	if err != nil {
		return err
	}
	if len(stubs) != 4 {
		return fmt.Errorf("%d allocations before the failures, want 4", len(stubs))
	}
	for _, stub := range stubs {
		if _, err := control.Post("/_standin/scheduler/allocations/"+stub.ID, map[string]string{"ClientStatus": "failed"}); err != nil {
			return err
		}
	}
	if err := control.Advance("1s"); err != nil {
		return err
	}
	evals, _, err := c.Jobs().Evaluations("burst", nil)
	if err != nil {
		return err
	}
	statuses := map[string]int{}
	for _, eval := range evals {
		if eval.TriggeredBy != "alloc-failure" || !eval.WaitUntil.IsZero() {
			continue
		}
		statuses[eval.Status]++
		if eval.Status == "canceled" && eval.StatusDescription != "canceled after more recent eval was processed" {
			return fmt.Errorf("canceled eval's description %q", eval.StatusDescription)
		}
	}
	if statuses["complete"] != 2 || statuses["canceled"] != 2 || len(statuses) != 2 {
		return fmt.Errorf("alloc-failure evaluations by status %v, want 2 complete and 2 canceled", statuses)
	}
	if err := control.Advance("10s"); err != nil {
		return err
	}
	stubs, _, err = c.Jobs().Allocations("burst", false, nil)
	if err != nil {
		return err
	}
	replaced := 0
	for _, stub := range stubs {
		if stub.ClientStatus == "failed" && stub.NextAllocation != "" {
			replaced++
		}
	}
	if replaced != 4 {
		return fmt.Errorf("%d of 4 failed allocations replaced", replaced)
	}
	return nil
}

func nomadAllocChecks(control Control) []Check {
	c := nomadClient()
	var alloc *nomad.Allocation
	running := func() error {
		if alloc != nil {
			return nil
		}
		var err error
		alloc, err = runningAlloc(c, control, lifeJob())
		return err
	}
	appState := func() (*nomad.TaskState, error) {
		info, _, err := c.Allocations().Info(alloc.ID, nil)
		if err != nil {
			return nil, err
		}
		state := info.TaskStates["app"]
		if state == nil {
			return nil, fmt.Errorf("no task state for app")
		}
		return state, nil
	}
	return []Check{
		{"nomad-alloc/restart", func() error {
			if err := running(); err != nil {
				return err
			}
			if err := c.Allocations().Restart(alloc, "", nil); err != nil {
				return err
			}
			if err := c.Allocations().Restart(alloc, "app", nil); err != nil {
				return err
			}
			state, err := appState()
			if err != nil {
				return err
			}
			if state.State != "running" || state.Restarts != 2 || state.LastRestart.IsZero() {
				return fmt.Errorf("after two restarts: state %q, restarts %d, last restart %v", state.State, state.Restarts, state.LastRestart)
			}
			var got []string
			for _, e := range state.Events[len(state.Events)-4:] {
				got = append(got, e.Type+": "+e.DisplayMessage)
			}
			want := "Restart Signaled: User requested task to restart|Terminated: Exit Code: 0|Restarting: Task restarting in 0s|Started: Task started by client"
			if strings.Join(got, "|") != want {
				return fmt.Errorf("events %q", got)
			}
			return wantError(c.Allocations().Restart(alloc, "nope", nil), "Could not find task runner for task: nope")
		}},
		{"nomad-alloc/signal", func() error {
			if err := running(); err != nil {
				return err
			}
			if err := c.Allocations().Signal(alloc, nil, "app", "SIGHUP"); err != nil {
				return err
			}
			state, err := appState()
			if err != nil {
				return err
			}
			last := state.Events[len(state.Events)-1]
			if last.Type != "Signaling" || last.DisplayMessage != "Task being sent a signal" || last.Details["signal"] != "SIGHUP" {
				return fmt.Errorf("last event %q %q %v", last.Type, last.DisplayMessage, last.Details)
			}
			return wantError(c.Allocations().Signal(alloc, nil, "nope", "SIGHUP"), "Task not found")
		}},
		{"nomad-alloc/stats", func() error {
			if err := running(); err != nil {
				return err
			}
			stats, err := c.Allocations().Stats(alloc, nil)
			if err != nil {
				return err
			}
			app := stats.Tasks["app"]
			if app == nil || app.ResourceUsage == nil || app.ResourceUsage.MemoryStats == nil || app.ResourceUsage.CpuStats == nil {
				return fmt.Errorf("no usage for app: %+v", stats.Tasks)
			}
			if app.ResourceUsage.MemoryStats.RSS == 0 || app.ResourceUsage.CpuStats.TotalTicks != 5 || stats.Timestamp == 0 || app.Timestamp != stats.Timestamp {
				return fmt.Errorf("usage %+v %+v at %d", app.ResourceUsage.MemoryStats, app.ResourceUsage.CpuStats, stats.Timestamp)
			}
			if stats.ResourceUsage.MemoryStats.RSS != app.ResourceUsage.MemoryStats.RSS {
				return fmt.Errorf("the allocation's sum %d is not its only task's %d", stats.ResourceUsage.MemoryStats.RSS, app.ResourceUsage.MemoryStats.RSS)
			}
			return nil
		}},
		{"nomad-alloc/reschedule", func() error { return rescheduleCheck(c, control) }},
		{"nomad-alloc/deployment-reschedule", func() error { return deploymentRescheduleCheck(c, control) }},
		{"nomad-alloc/failure-burst-one-eval-at-a-time", func() error { return failureBurstCheck(c, control) }},
		{"nomad-alloc/stop", func() error {
			if err := running(); err != nil {
				return err
			}
			answer, err := c.Allocations().Stop(alloc, nil)
			if err != nil {
				return err
			}
			if answer.EvalID == "" || answer.LastIndex == 0 {
				return fmt.Errorf("stop answered %+v", answer)
			}
			if err := control.Advance("5s"); err != nil {
				return err
			}
			stopped, _, err := c.Allocations().Info(alloc.ID, nil)
			if err != nil {
				return err
			}
			if stopped.DesiredStatus != "stop" || stopped.DesiredDescription != "alloc is being migrated" || stopped.NextAllocation == "" {
				return fmt.Errorf("stopped alloc: %q %q next %q", stopped.DesiredStatus, stopped.DesiredDescription, stopped.NextAllocation)
			}
			if err := wantError(c.Allocations().Restart(stopped, "", nil), "restart of an alloc that should not run"); err != nil {
				return err
			}
			return wantError(c.Allocations().Signal(stopped, nil, "app", "SIGHUP"), "Task not running")
		}},
	}
}
