package main

import (
	"fmt"
	"strings"

	nomad "github.com/hashicorp/nomad/api"
	"github.com/hashicorp/nomad/api/contexts"
)

// nomadSearchChecks drive the search endpoints through the official client:
// Search().PrefixSearch (what the CLI's ID completion uses) and FuzzySearch
// (the UI's search box), with their contexts, truncation and errors.
func nomadSearchChecks(control Control) []Check {
	c := nomadClient()
	search := c.Search()
	searchJob := func(id string) *nomad.Job {
		task := nomad.NewTask("nginx-server", "docker").SetConfig("image", "nginx:1.25").Require(&nomad.Resources{CPU: ptr(100), MemoryMB: ptr(64)})
		group := nomad.NewTaskGroup("frontend", 1).AddTask(task)
		return nomad.NewServiceJob(id, id, "global", 50).AddDatacenter("dc1").AddTaskGroup(group)
	}
	var alloc *nomad.Allocation
	return []Check{
		{"nomad-search/prefix", func() error {
			var err error
			if alloc, err = runningAlloc(c, control, searchJob("search-web")); err != nil {
				return err
			}
			jobs, meta, err := search.PrefixSearch("search", contexts.Jobs, nil)
			if err != nil {
				return err
			}
			all, _, err := search.PrefixSearch(alloc.ID[:5], contexts.All, nil)
			if err != nil {
				return err
			}
			byName, _, err := search.PrefixSearch("search", contexts.All, nil)
			if err != nil {
				return err
			}
			_, hasEvals := byName.Matches[contexts.Evals]
			return First(
				Expect(len(jobs.Matches) == 1 && len(jobs.Matches[contexts.Jobs]) == 1 && jobs.Matches[contexts.Jobs][0] == "search-web", "jobs: %+v", jobs.Matches),
				// The index comes from the header; the body's QueryMeta is the server's (Index, not LastIndex), so only KnownLeader decodes.
				Expect(!jobs.Truncations[contexts.Jobs] && meta.LastIndex > 1 && jobs.KnownLeader, "meta: %+v %+v", meta, jobs.QueryMeta),
				// An odd prefix is rounded down for the index and kept whole for the match.
				Expect(len(all.Matches[contexts.Allocs]) == 1 && all.Matches[contexts.Allocs][0] == alloc.ID, "allocs: %+v", all.Matches),
				// "search" is not hex: the UUID contexts are left out.
				Expect(!hasEvals && len(byName.Matches[contexts.Jobs]) == 1, "by name: %+v", byName.Matches),
			)
		}},
		{"nomad-search/prefix-truncated", func() error {
			for i := 0; i < 21; i++ {
				if _, _, err := c.Jobs().Register(batchJob(fmt.Sprintf("trunc-%02d", i)), nil); err != nil {
					return err
				}
			}
			resp, _, err := search.PrefixSearch("trunc-", contexts.Jobs, nil)
			if err != nil {
				return err
			}
			ids := resp.Matches[contexts.Jobs]
			return First(
				Expect(len(ids) == 20 && ids[0] == "trunc-00" && ids[19] == "trunc-19", "ids: %v", ids),
				Expect(resp.Truncations[contexts.Jobs], "truncations: %+v", resp.Truncations),
			)
		}},
		{"nomad-search/fuzzy", func() error {
			resp, meta, err := search.FuzzySearch("NGINX", contexts.All, nil)
			if err != nil {
				return err
			}
			tasks, images := resp.Matches[contexts.Tasks], resp.Matches[contexts.Images]
			scope := func(m []nomad.FuzzyMatch) string {
				if len(m) == 0 {
					return ""
				}
				return strings.Join(m[0].Scope, "/")
			}
			front, _, err := search.FuzzySearch("front", contexts.Jobs, nil)
			if err != nil {
				return err
			}
			return First(
				Expect(len(tasks) == 1 && tasks[0].ID == "nginx-server" && scope(tasks) == "default/search-web/frontend", "tasks: %+v", tasks),
				Expect(len(images) == 1 && images[0].ID == "nginx:1.25" && scope(images) == "default/search-web/frontend/nginx-server", "images: %+v", images),
				Expect(meta.LastIndex > 1 && !resp.Truncations[contexts.Jobs], "meta: %+v truncations %+v", meta, resp.Truncations),
				Expect(len(front.Matches[contexts.Groups]) == 1 && scope(front.Matches[contexts.Groups]) == "default/search-web", "groups: %+v", front.Matches),
			)
		}},
		{"nomad-search/errors", func() error {
			_, _, short := search.FuzzySearch("n", contexts.All, nil)
			_, _, unknown := search.PrefixSearch("x", contexts.Context("bogus"), nil)
			return First(
				Expect(short != nil && strings.Contains(short.Error(), "500") && strings.Contains(short.Error(), "fuzzy search query must be at least 2 characters, got 1"), "short: %v", short),
				Expect(unknown != nil && strings.Contains(unknown.Error(), `or 'all' for all contexts; got "bogus"`), "unknown: %v", unknown),
			)
		}},
	}
}
