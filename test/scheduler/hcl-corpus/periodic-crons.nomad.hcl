# Several cron specs at once (crons), and a periodic block that is disabled.
job "cleanup" {
  type = "sysbatch"

  periodic {
    crons   = ["*/15 9-17 * * MON-FRI", "0 */2 * * SAT,SUN"]
    enabled = false
  }

  group "sweep" {
    task "sweep" {
      driver = "raw_exec"

      config {
        command = "/usr/local/bin/sweep-tmp"
      }
    }
  }
}
