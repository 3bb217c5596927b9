# exec and raw_exec tasks: command/args config, env in block and map forms
# (keys with dots need the map form), user, kill_timeout, kill_signal,
# shutdown_delay at group and task level.
job "exec-drivers" {
  datacenters = ["dc1"]

  group "tools" {
    shutdown_delay = "5s"

    task "exec" {
      driver       = "exec"
      user         = "nobody"
      kill_timeout = "45s"
      kill_signal  = "SIGINT"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "${NOMAD_PORT_http}"]
        pid_mode = "private"
      }

      env {
        PYTHONUNBUFFERED = "1"
        DATA_DIR         = "${NOMAD_ALLOC_DIR}/data"
      }
    }

    task "raw" {
      driver         = "raw_exec"
      shutdown_delay = "10s"

      config {
        command = "C:\\Windows\\System32\\cmd.exe"
        args    = ["/c", "echo", "hello"]
      }

      env = {
        "app.mode" = "batch"
        RETRIES    = 3
      }
    }
  }
}
