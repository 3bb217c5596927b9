package main

import (
	"strings"

	nomad "github.com/hashicorp/nomad/api"
)

// nomadPoolsChecks drive node pools and the evaluation count through the
// official client: NodePools() List, Info, Register, ListNodes, ListJobs,
// Delete, and Evaluations().Count.
func nomadPoolsChecks(control Control) []Check {
	c := nomadClient()
	pools := c.NodePools()
	return []Check{
		{"nomad-pools/built-ins", func() error {
			list, meta, err := pools.List(nil)
			if err != nil {
				return err
			}
			all, _, err := pools.Info("all", nil)
			if err != nil {
				return err
			}
			return First(
				Expect(len(list) == 2 && list[0].Name == "all" && list[1].Name == "default", "pools: %+v", list),
				Expect(meta.LastIndex >= 1, "index %d", meta.LastIndex),
				Expect(all.Description == "Node pool with all nodes in the cluster." && all.CreateIndex == 1, "all: %+v", all),
			)
		}},
		{"nomad-pools/register-and-info", func() error {
			if _, err := pools.Register(&nomad.NodePool{Name: "gpu", Description: "GPU nodes", Meta: map[string]string{"team": "ml"}}, nil); err != nil {
				return err
			}
			pool, _, err := pools.Info("gpu", nil)
			if err != nil {
				return err
			}
			_, _, missing := pools.Info("nope", nil)
			_, builtIn := pools.Register(&nomad.NodePool{Name: "default", Description: "mine"}, nil)
			return First(
				Expect(pool.Name == "gpu" && pool.Description == "GPU nodes" && pool.Meta["team"] == "ml" && pool.CreateIndex > 1, "pool: %+v", pool),
				Expect(missing != nil && strings.Contains(missing.Error(), "404"), "missing pool: %v", missing),
				Expect(builtIn != nil && strings.Contains(builtIn.Error(), `modifying node pool "default" is not allowed`), "built-in: %v", builtIn),
			)
		}},
		{"nomad-pools/list-nodes", func() error {
			inDefault, _, err := pools.ListNodes("default", nil)
			if err != nil {
				return err
			}
			inAll, _, err := pools.ListNodes("all", nil)
			if err != nil {
				return err
			}
			inGpu, _, err := pools.ListNodes("gpu", nil)
			return First(err,
				Expect(len(inDefault) == 1 && inDefault[0].NodePool == "default", "default: %+v", inDefault),
				Expect(len(inAll) == 1, "all: %+v", inAll),
				Expect(len(inGpu) == 0, "gpu: %+v", inGpu),
			)
		}},
		{"nomad-pools/jobs-and-delete", func() error {
			job := batchJob("pooled")
			job.NodePool = ptr("gpu")
			if _, _, err := c.Jobs().Register(job, nil); err != nil {
				return err
			}
			jobs, _, err := pools.ListJobs("gpu", nil)
			if err != nil {
				return err
			}
			_, inUse := pools.Delete("gpu", nil)
			if _, _, err := c.Jobs().Deregister("pooled", true, nil); err != nil {
				return err
			}
			if _, err := pools.Delete("gpu", nil); err != nil {
				return err
			}
			_, _, gone := pools.Info("gpu", nil)
			return First(
				Expect(len(jobs) == 1 && jobs[0].ID == "pooled", "jobs: %+v", jobs),
				Expect(inUse != nil && strings.Contains(inUse.Error(), `node pool "gpu" has non-terminal jobs in regions: [global]`), "in use: %v", inUse),
				Expect(gone != nil && strings.Contains(gone.Error(), "404"), "deleted pool still there: %v", gone),
			)
		}},
		{"nomad-pools/evaluation-count", func() error {
			evals, _, err := c.Evaluations().List(nil)
			if err != nil {
				return err
			}
			count, meta, err := c.Evaluations().Count(nil)
			if err != nil {
				return err
			}
			return Expect(count.Count == len(evals) && count.Count > 0 && meta.LastIndex > 0, "count %+v of %d", count, len(evals))
		}},
	}
}
