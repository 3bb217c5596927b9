package main

import (
	"strings"

	nomad "github.com/hashicorp/nomad/api"
)

// nomadOperatorChecks drive the scheduler configuration and the batch
// evaluation delete through the official client: Operator()
// SchedulerGetConfiguration, SchedulerSetConfiguration,
// SchedulerCASConfiguration, Evaluations() Delete and DeleteOpts, and
// garbage collection: on the clock, and System() GarbageCollect.
func nomadOperatorChecks(control Control) []Check {
	c := nomadClient()
	op := c.Operator()
	evals := c.Evaluations()
	setPaused := func(paused bool) error {
		resp, _, err := op.SchedulerGetConfiguration(nil)
		if err != nil {
			return err
		}
		conf := resp.SchedulerConfig
		conf.PauseEvalBroker = paused
		out, _, err := op.SchedulerSetConfiguration(conf, nil)
		return First(err, Expect(out != nil && out.Updated, "set: %+v", out))
	}
	return []Check{
		{"nomad-operator/default-configuration", func() error {
			resp, meta, err := op.SchedulerGetConfiguration(nil)
			if err != nil {
				return err
			}
			conf := resp.SchedulerConfig
			return First(
				Expect(conf != nil && conf.SchedulerAlgorithm == nomad.SchedulerAlgorithmBinpack, "config: %+v", conf),
				Expect(conf.PreemptionConfig.SystemSchedulerEnabled && !conf.PreemptionConfig.BatchSchedulerEnabled && !conf.PreemptionConfig.ServiceSchedulerEnabled, "preemption: %+v", conf.PreemptionConfig),
				Expect(!conf.PauseEvalBroker && !conf.RejectJobRegistration && !conf.MemoryOversubscriptionEnabled, "switches: %+v", conf),
				Expect(conf.ModifyIndex == 1 && meta.LastIndex == 1, "indexes: %+v %+v", conf, meta),
			)
		}},
		{"nomad-operator/set-and-cas", func() error {
			resp, _, err := op.SchedulerGetConfiguration(nil)
			if err != nil {
				return err
			}
			conf := resp.SchedulerConfig
			conf.SchedulerAlgorithm = nomad.SchedulerAlgorithmSpread
			conf.MemoryOversubscriptionEnabled = true
			set, wm, err := op.SchedulerSetConfiguration(conf, nil)
			if err != nil {
				return err
			}
			after, _, err := op.SchedulerGetConfiguration(nil)
			if err != nil {
				return err
			}
			stale := *after.SchedulerConfig
			stale.ModifyIndex = 1
			stale.SchedulerAlgorithm = nomad.SchedulerAlgorithmBinpack
			missed, _, err := op.SchedulerCASConfiguration(&stale, nil)
			if err != nil {
				return err
			}
			fresh := *after.SchedulerConfig
			fresh.SchedulerAlgorithm = nomad.SchedulerAlgorithmBinpack
			hit, _, err := op.SchedulerCASConfiguration(&fresh, nil)
			if err != nil {
				return err
			}
			final, _, err := op.SchedulerGetConfiguration(nil)
			_, _, invalid := op.SchedulerSetConfiguration(&nomad.SchedulerConfiguration{SchedulerAlgorithm: "fastest"}, nil)
			return First(err,
				Expect(set.Updated && wm.LastIndex > 1, "set: %+v %+v", set, wm),
				Expect(after.SchedulerConfig.SchedulerAlgorithm == nomad.SchedulerAlgorithmSpread && after.SchedulerConfig.MemoryOversubscriptionEnabled && after.SchedulerConfig.ModifyIndex == wm.LastIndex, "after: %+v", after.SchedulerConfig),
				Expect(!missed.Updated, "a stale CAS wrote: %+v", missed),
				Expect(hit.Updated, "a fresh CAS did not write: %+v", hit),
				Expect(final.SchedulerConfig.SchedulerAlgorithm == nomad.SchedulerAlgorithmBinpack, "final: %+v", final.SchedulerConfig),
				Expect(invalid != nil && strings.Contains(invalid.Error(), "400") && strings.Contains(invalid.Error(), "invalid scheduler algorithm: fastest"), "invalid: %v", invalid),
			)
		}},
		{"nomad-operator/paused-broker-holds-evals", func() error {
			if err := setPaused(true); err != nil {
				return err
			}
			resp, _, err := c.Jobs().Register(batchJob("held"), nil)
			if err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			held, _, err := evals.Info(resp.EvalID, nil)
			if err != nil {
				return err
			}
			if err := setPaused(false); err != nil {
				return err
			}
			if err := control.Advance("5s"); err != nil {
				return err
			}
			done, _, err := evals.Info(resp.EvalID, nil)
			return First(err,
				Expect(held.Status == nomad.EvalStatusPending, "while paused: %s", held.Status),
				Expect(done.Status == nomad.EvalStatusComplete, "after unpausing: %s", done.Status),
			)
		}},
		{"nomad-operator/delete-evaluations", func() error {
			_, running := evals.Delete([]string{"00000000-0000-0000-0000-000000000000"}, nil)
			if err := setPaused(true); err != nil {
				return err
			}
			if _, _, err := c.Jobs().Deregister("held", false, nil); err != nil {
				return err
			}
			list, _, err := evals.List(&nomad.QueryOptions{Params: map[string]string{"job": "held"}})
			if err != nil {
				return err
			}
			ids := make([]string, 0, len(list))
			for _, e := range list {
				ids = append(ids, e.ID)
			}
			wm, err := evals.Delete(ids, nil)
			if err != nil {
				return err
			}
			left, _, err := evals.List(&nomad.QueryOptions{Params: map[string]string{"job": "held"}})
			if err != nil {
				return err
			}
			_, _, missing := evals.Info(ids[0], nil)
			none, _, err := evals.DeleteOpts(&nomad.EvalDeleteRequest{Filter: `JobID == "nothing"`}, nil)
			if err != nil {
				return err
			}
			_, unknown := evals.Delete([]string{"00000000-0000-0000-0000-000000000000"}, nil)
			return First(
				setPaused(false),
				Expect(running != nil && strings.Contains(running.Error(), "eval broker is enabled; eval broker must be paused to delete evals"), "broker running: %v", running),
				Expect(len(ids) >= 2 && wm.LastIndex > 1, "deleted %v at %+v", ids, wm),
				Expect(len(left) == 0, "left: %+v", left),
				Expect(missing != nil && strings.Contains(missing.Error(), "404"), "deleted eval still read: %v", missing),
				Expect(none.Count == 0, "filter matching nothing: %+v", none),
				Expect(unknown != nil && strings.Contains(unknown.Error(), "500") && strings.Contains(unknown.Error(), "eval not found"), "unknown: %v", unknown),
			)
		}},
		{"nomad-operator/gc-on-the-clock", func() error {
			// A stopped service job's deregister evaluation goes after eval_gc_threshold (1h), the job after job_gc_threshold (4h).
			web := webJob("nginx:1", 1, nil)
			web.ID, web.Name = ptr("gc-web"), ptr("gc-web")
			resp, _, err := c.Jobs().Register(web, nil)
			if err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			stop, _, err := c.Jobs().Deregister("gc-web", false, nil)
			if err != nil {
				return err
			}
			if err := control.Advance("30m"); err != nil {
				return err
			}
			kept, _, keptErr := evals.Info(stop, nil)
			if err := control.Advance("4h"); err != nil {
				return err
			}
			_, _, gone := evals.Info(resp.EvalID, nil)
			_, _, jobGone := c.Jobs().Info("gc-web", nil)
			return First(keptErr,
				Expect(kept != nil && kept.ID == stop, "kept: %+v", kept),
				Expect(gone != nil && strings.Contains(gone.Error(), "404") && strings.Contains(gone.Error(), "eval not found"), "collected eval: %v", gone),
				Expect(jobGone != nil && strings.Contains(jobGone.Error(), "404") && strings.Contains(jobGone.Error(), "job not found"), "collected job: %v", jobGone),
			)
		}},
		{"nomad-operator/system-gc", func() error {
			resp, _, err := c.Jobs().Register(batchJob("gc-once"), nil)
			if err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			before, _, err := evals.Info(resp.EvalID, nil)
			if err != nil {
				return err
			}
			if err := c.System().GarbageCollect(); err != nil {
				return err
			}
			_, _, gone := evals.Info(resp.EvalID, nil)
			_, _, jobGone := c.Jobs().Info("gc-once", nil)
			return First(
				Expect(before.Status == nomad.EvalStatusComplete, "before: %s", before.Status),
				Expect(gone != nil && strings.Contains(gone.Error(), "404") && strings.Contains(gone.Error(), "eval not found"), "collected eval: %v", gone),
				Expect(jobGone != nil && strings.Contains(jobGone.Error(), "404"), "collected job: %v", jobGone),
				c.System().ReconcileSummaries(),
			)
		}},
	}
}
