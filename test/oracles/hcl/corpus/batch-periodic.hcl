# A batch job with periodic, reschedule and restart blocks.
job "nightly" {
  type = "batch"
  periodic {
    crons            = ["0 3 * * *", "30 4 * * 1"]
    prohibit_overlap = true
    time_zone        = "Europe/Paris"
  }
  reschedule {
    attempts = 2
  }
  group "g" {
    restart {
      attempts = 1
      mode     = "delay"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/backup"
      }
    }
  }
}
