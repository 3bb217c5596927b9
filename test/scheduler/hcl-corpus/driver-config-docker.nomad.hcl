# A docker task's config: free-form, so nested blocks become lists of maps (a
# labelled block nests its label as a key), an attribute assigned an object
# literal becomes a one-element list, objects inside lists stay plain maps,
# and whole numbers stay integers while fractions stay floats.
job "docker-config" {
  datacenters = ["dc1"]

  group "g" {
    task "app" {
      driver = "docker"

      config {
        image          = "example/app:2.0"
        command        = "/app/server"
        args           = ["--port", "8080", "--verbose"]
        force_pull     = true
        cpu_hard_limit = false
        shm_size       = 134217728
        cpu_cfs_period = 100000
        oom_score_adj  = 0.5
        work_dir       = "/app"

        sysctl = {
          "net.core.somaxconn" = "16384"
        }

        labels {
          team    = "payments"
          service = "app"
        }

        logging {
          type = "journald"
          config {
            tag = "app"
          }
        }

        mount {
          type     = "tmpfs"
          target   = "/scratch"
          readonly = false
          tmpfs_options {
            size = 100000
          }
        }

        mounts = [
          {
            type   = "bind"
            source = "local/certs"
            target = "/etc/certs"
          }
        ]

        auth {
          username = "robot"
          password = "hunter2"
        }
      }
    }
  }
}
