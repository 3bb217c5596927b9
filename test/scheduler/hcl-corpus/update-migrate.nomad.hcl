# update at job level and a group update that overrides part of it; migrate;
# every duration as a Go duration string, which the API carries as nanoseconds.
job "rolling" {
  datacenters = ["dc1"]

  update {
    stagger           = "45s"
    max_parallel      = 2
    health_check      = "checks"
    min_healthy_time  = "15s"
    healthy_deadline  = "3m30s"
    progress_deadline = "12m"
    auto_revert       = true
    auto_promote      = false
    canary            = 1
  }

  migrate {
    max_parallel     = 3
    health_check     = "task_states"
    min_healthy_time = "20s"
    healthy_deadline = "4m"
  }

  group "frontend" {
    count = 4

    update {
      max_parallel     = 1
      canary           = 2
      auto_promote     = true
      min_healthy_time = "1m30s"
    }

    migrate {
      max_parallel = 1
    }

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:1.27"
      }
    }
  }
}
