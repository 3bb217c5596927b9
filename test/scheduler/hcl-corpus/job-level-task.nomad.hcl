# A task written directly in the job block becomes a group of its own, named
# after the task, placed before the file's groups.
job "mixed" {
  datacenters = ["dc1"]

  group "web" {
    count = 2

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:1.27"
      }
    }
  }

  task "solo" {
    driver = "exec"

    config {
      command = "/bin/solo"
    }

    env {
      MODE = "standalone"
    }
  }
}
