# Group scaling (type defaults to horizontal, free-form policy), disconnect,
# prevent_reschedule_on_lost, the job's ui block, and a task scaling "cpu"
# policy (type vertical_cpu).
job "autoscaled" {
  datacenters = ["dc1"]

  ui {
    description = "The **checkout** service"

    link {
      label = "Runbook"
      url   = "https://wiki.example.com/checkout"
    }
  }

  group "checkout" {
    count                      = 3
    prevent_reschedule_on_lost = true

    scaling {
      enabled = true
      min     = 2
      max     = 20

      policy {
        cooldown            = "2m"
        evaluation_interval = "30s"

        check "avg_cpu" {
          source = "nomad-apm"
          query  = "avg_cpu"

          strategy "target-value" {
            target = 70
          }
        }
      }
    }

    disconnect {
      lost_after = "6h"
      replace    = false
      reconcile  = "keep_original"
    }

    task "app" {
      driver = "docker"

      config {
        image = "example/checkout:9"
      }

      scaling "cpu" {
        enabled = false
        min     = 100
        max     = 2000

        policy {
          cooldown = "1h"
        }
      }
    }
  }
}
