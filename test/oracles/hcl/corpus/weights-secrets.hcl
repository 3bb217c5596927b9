# Nomad 1.9's service `weights` block and `resources { secrets }`, with a
# zero weight canonicalize raises to 1.
job "weights" {
  group "g" {
    service {
      name     = "web"
      provider = "consul"
      weights {
        passing = 10
        warning = 0
      }
    }

    task "t" {
      driver = "docker"
      config {
        image = "nginx"
      }
      resources {
        cpu     = 200
        memory  = 256
        secrets = 64
      }
      service {
        name = "task-svc"
        weights {
          warning = 3
        }
      }
    }
  }
}
