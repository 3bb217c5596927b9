# A system job with its own update block: the group inherits it.
job "agent" {
  type = "system"
  update {
    max_parallel = 2
    stagger      = "10s"
  }
  group "g" {
    task "t" {
      driver = "exec"
      config {
        command = "/bin/agent"
      }
    }
  }
}
