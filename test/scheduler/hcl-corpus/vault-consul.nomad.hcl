# vault at job, group and task level: a task without its own vault block takes
# its group's, else the job's, and the parser fills env, disable_file and
# change_mode; consul blocks at group and task level.
job "secrets" {
  datacenters = ["dc1"]

  vault {
    policies = ["job-default"]
  }

  group "with-group-vault" {
    consul {
      namespace = "team-a"
    }

    vault {
      role      = "group-role"
      namespace = "ns-a"
      env       = false
    }

    task "inherits-group" {
      driver = "docker"

      config {
        image = "example/a:1"
      }
    }

    task "own-vault" {
      driver = "docker"

      config {
        image = "example/b:1"
      }

      vault {
        policies      = ["task-b"]
        change_mode   = "signal"
        change_signal = "SIGUSR1"
        disable_file  = true
        cluster       = "primary"
      }

      consul {
        cluster   = "secondary"
        partition = "billing"
      }
    }
  }

  group "plain" {
    task "inherits-job" {
      driver = "docker"

      config {
        image = "example/c:1"
      }
    }
  }
}
