# Task blocks seldom used together: lifecycle without a hook (optional in
# the api struct), schedule, numa, csi_plugin, dispatch_payload, kill
# settings, leader, actions, consul and vault.
job "extras" {
  type = "batch"
  parameterized {
    payload       = "optional"
    meta_required = ["who"]
  }
  group "g" {
    task "t" {
      driver       = "docker"
      leader       = true
      kill_timeout = "20s"
      kill_signal  = "SIGINT"
      shutdown_delay = "2s"
      lifecycle {
        sidecar = true
      }
      schedule {
        cron {
          start    = "0 9 * * 1-5"
          end      = "0 17"
          timezone = "America/New_York"
        }
      }
      resources {
        cores = 2
        numa {
          affinity = "require"
          devices  = ["nvidia/gpu"]
        }
        device "nvidia/gpu" {
          count = 1
          affinity {
            attribute = "${device.model}"
            value     = "Tesla"
            weight    = 50
          }
        }
      }
      csi_plugin {
        id        = "ebs"
        type      = "monolith"
        mount_dir = "/csi"
      }
      dispatch_payload {
        file = "input.json"
      }
      action "hello" {
        command = "/bin/echo"
        args    = ["hi"]
      }
      consul {
        cluster = "other"
      }
      vault {
        role = "r"
        env  = false
      }
      logs {
        disabled = true
      }
    }
  }
}
