# A system job: no default update strategy and no reschedule policy on
# canonicalize (only service jobs get the default update).
job "agent" {
  type = "system"
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/agent"
      }
    }
  }
}
