package main

import (
	"strings"
	"time"

	nomad "github.com/hashicorp/nomad/api"
)

const hclWebJob = `
variable "image" {
  type    = string
  default = "nginx:1"
}
job "hcl-web" {
  datacenters = ["dc1"]
  meta {
    team = "core"
  }
  group "web" {
    count = 2
    network {
      port "http" {
        to = 8080
      }
      port "admin" {
        static = 9000
      }
    }
    task "server" {
      driver       = "docker"
      kill_timeout = "20s"
      config {
        image = var.image
        args  = ["--port", "${NOMAD_PORT_http}"]
      }
      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`

// nomadHCLChecks drives nomad/api's Jobs().ParseHCL / ParseHCLOpts: an HCL2
// job file decoded into api.Job (variables from the Variables text,
// durations, ports, free-form config), the canonicalized form, Nomad's
// parse error, and a parsed job registered and run.
func nomadHCLChecks(control Control) []Check {
	c := nomadClient()
	jobs := c.Jobs()
	return []Check{
		{"nomad-hcl/parse-with-variables", func() error {
			job, err := jobs.ParseHCLOpts(&nomad.JobsParseRequest{JobHCL: hclWebJob, Variables: `image = "redis:7"`})
			if err != nil {
				return err
			}
			if err := Expect(job.ID != nil && *job.ID == "hcl-web" && job.Name != nil && *job.Name == "hcl-web", "id/name: %v %v", job.ID, job.Name); err != nil {
				return err
			}
			if err := Expect(job.Region == nil && job.Type == nil && job.Meta["team"] == "core", "job: region %v type %v meta %v", job.Region, job.Type, job.Meta); err != nil {
				return err
			}
			if err := Expect(len(job.TaskGroups) == 1 && job.TaskGroups[0].Count != nil && *job.TaskGroups[0].Count == 2, "groups: %+v", job.TaskGroups); err != nil {
				return err
			}
			net := job.TaskGroups[0].Networks[0]
			if err := Expect(len(net.ReservedPorts) == 1 && net.ReservedPorts[0].Value == 9000 && len(net.DynamicPorts) == 1 && net.DynamicPorts[0].To == 8080, "ports: %+v", net); err != nil {
				return err
			}
			task := job.TaskGroups[0].Tasks[0]
			args, _ := task.Config["args"].([]interface{})
			if err := Expect(task.Config["image"] == "redis:7" && len(args) == 2 && args[1] == "${NOMAD_PORT_http}", "config: %v", task.Config); err != nil {
				return err
			}
			return Expect(task.KillTimeout != nil && *task.KillTimeout == 20*time.Second && job.TaskGroups[0].RestartPolicy == nil, "kill timeout %v, restart %v", task.KillTimeout, job.TaskGroups[0].RestartPolicy)
		}},
		{"nomad-hcl/parse-canonicalized", func() error {
			job, err := jobs.ParseHCL(hclWebJob, true)
			if err != nil {
				return err
			}
			if err := Expect(*job.Region == "global" && *job.Namespace == "default" && *job.Type == "service" && *job.Priority == 50, "job defaults: %v %v %v %v", *job.Region, *job.Namespace, *job.Type, *job.Priority); err != nil {
				return err
			}
			g := job.TaskGroups[0]
			if err := Expect(g.RestartPolicy != nil && *g.RestartPolicy.Attempts == 2 && *g.RestartPolicy.Mode == "fail", "restart: %+v", g.RestartPolicy); err != nil {
				return err
			}
			if err := Expect(g.EphemeralDisk != nil && *g.EphemeralDisk.SizeMB == 300 && job.Update != nil && *job.Update.MaxParallel == 1, "disk %+v update %+v", g.EphemeralDisk, job.Update); err != nil {
				return err
			}
			t := g.Tasks[0]
			return Expect(t.LogConfig != nil && *t.LogConfig.MaxFiles == 10 && *t.Resources.CPU == 100, "task: logs %+v resources %+v", t.LogConfig, t.Resources)
		}},
		{"nomad-hcl/parse-error", func() error {
			_, err := jobs.ParseHCL("job \"x\" {\n  group \"g\" {\n    cnt = 1\n  }\n}\n", false)
			want := `Failed to parse job: input.hcl:3,5-8: Unsupported argument; An argument named "cnt" is not expected here. Did you mean "count"?`
			return Expect(err != nil && strings.Contains(err.Error(), "400") && strings.Contains(err.Error(), want), "error: %v", err)
		}},
		{"nomad-hcl/parse-then-register", func() error {
			// Two allocations on the one default node: no static port for them to share.
			job, err := jobs.ParseHCL(strings.Replace(hclWebJob, "static = 9000", "to = 9000", 1), false)
			if err != nil {
				return err
			}
			if _, _, err := jobs.Register(job, nil); err != nil {
				return err
			}
			if err := control.Advance("1m"); err != nil {
				return err
			}
			allocs, _, err := jobs.Allocations("hcl-web", false, nil)
			running := 0
			for _, a := range allocs {
				if a.ClientStatus == "running" {
					running++
				}
			}
			return First(err, Expect(running == 2, "running allocations: %d of %d", running, len(allocs)))
		}},
	}
}
