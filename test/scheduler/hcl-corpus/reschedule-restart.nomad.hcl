# reschedule at job and group level (unlimited, delay functions) and restart at
# group and task level; a task restart block carries only what it sets.
job "resilient" {
  datacenters = ["dc1"]

  reschedule {
    delay          = "30s"
    delay_function = "exponential"
    max_delay      = "1h"
    unlimited      = true
  }

  group "queue" {
    reschedule {
      attempts       = 5
      interval       = "12h"
      delay          = "10s"
      delay_function = "fibonacci"
      max_delay      = "10m"
      unlimited      = false
    }

    restart {
      attempts         = 3
      interval         = "5m"
      delay            = "25s"
      mode             = "delay"
      render_templates = true
    }

    task "consumer" {
      driver = "exec"

      config {
        command = "/bin/consumer"
        args    = ["--queue", "orders"]
      }

      restart {
        attempts = 10
      }
    }
  }
}
