# A periodic batch job: one cron spec, overlap prohibited, a time zone; the
# parser sets SpecType "cron" itself.
job "nightly-report" {
  type        = "batch"
  datacenters = ["dc1"]

  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
    time_zone        = "Europe/Berlin"
  }

  group "report" {
    task "generate" {
      driver = "exec"

      config {
        command = "/usr/local/bin/report"
        args    = ["--date", "yesterday"]
      }
    }
  }
}
