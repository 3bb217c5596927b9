# Task lifecycle hooks: a prestart init task, a prestart sidecar, a poststart
# task and a poststop task next to the main task (leader).
job "lifecycle" {
  datacenters = ["dc1"]

  group "app" {
    task "wait-for-db" {
      driver = "exec"

      lifecycle {
        hook = "prestart"
      }

      config {
        command = "/bin/sh"
        args    = ["-c", "until nc -z db.service.consul 5432; do sleep 1; done"]
      }
    }

    task "log-shipper" {
      driver = "docker"

      lifecycle {
        hook    = "prestart"
        sidecar = true
      }

      config {
        image = "fluent/fluent-bit:3.0"
      }
    }

    task "main" {
      driver = "docker"
      leader = true

      config {
        image = "example/app:3"
      }
    }

    task "announce" {
      driver = "exec"

      lifecycle {
        hook = "poststart"
      }

      config {
        command = "/usr/local/bin/announce"
      }
    }

    task "cleanup" {
      driver = "raw_exec"

      lifecycle {
        hook    = "poststop"
        sidecar = false
      }

      config {
        command = "/usr/local/bin/cleanup"
      }
    }
  }
}
