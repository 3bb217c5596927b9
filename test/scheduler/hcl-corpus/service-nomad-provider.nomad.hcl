# Group-level services with provider = "nomad" (Nomad's native service
# discovery): an http check on a named port, a service with no check, and a
# group-level check_restart.
job "native-services" {
  datacenters = ["dc1"]

  group "cache" {
    network {
      port "db" {
        to = 6379
      }
    }

    service {
      name     = "redis"
      provider = "nomad"
      port     = "db"
      tags     = ["cache", "primary"]

      check {
        name     = "redis-alive"
        type     = "tcp"
        interval = "15s"
        timeout  = "3s"
      }
    }

    service {
      name     = "redis-exporter"
      provider = "nomad"
      port     = "9121"
      address  = "10.1.2.3"

      check_restart {
        limit = 2
        grace = "30s"
      }
    }

    task "redis" {
      driver = "docker"

      config {
        image = "redis:7"
        ports = ["db"]
      }
    }
  }
}
