# A task service registered in Consul: tags and canary tags, meta, canary
# meta, tagged addresses, an HTTP check with headers and check_restart, a
# TCP check, and a script check; check durations in nanoseconds.
job "api" {
  datacenters = ["dc1"]

  group "api" {
    count = 2

    network {
      port "http" {
        to = 8080
      }
    }

    task "server" {
      driver = "docker"

      config {
        image = "example/api:4.1.0"
        ports = ["http"]
      }

      service {
        name         = "api"
        port         = "http"
        tags         = ["v4", "urlprefix-/api"]
        canary_tags  = ["canary"]
        address_mode = "host"
        on_update    = "require_healthy"

        meta {
          version = "4.1.0"
        }

        canary_meta {
          stage = "canary"
        }

        tagged_addresses {
          wan = "203.0.113.10"
        }

        check {
          name     = "api-health"
          type     = "http"
          path     = "/health"
          method   = "GET"
          interval = "10s"
          timeout  = "2s"

          header {
            X-Probe = ["nomad"]
            Accept  = ["application/json", "text/plain"]
          }

          check_restart {
            limit           = 3
            grace           = "90s"
            ignore_warnings = false
          }
        }

        check {
          type     = "tcp"
          port     = "http"
          interval = "30s"
          timeout  = "5s"
        }

        check {
          name                     = "queue-depth"
          type                     = "script"
          command                  = "/usr/local/bin/check-queue"
          args                     = ["--max", "1000"]
          interval                 = "1m"
          timeout                  = "10s"
          success_before_passing   = 2
          failures_before_critical = 3
          initial_status           = "warning"
        }
      }
    }
  }
}
