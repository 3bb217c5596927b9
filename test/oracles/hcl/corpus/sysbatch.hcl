# A sysbatch job: a zeroed reschedule policy per group on canonicalize, the
# batch restart defaults, no update and no migrate.
job "sweep" {
  type = "sysbatch"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}
