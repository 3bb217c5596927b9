# A CSI node plugin task (csi_plugin), workload identities (the unnamed one
# becomes the task's Identity, a named one stays in Identities) and a task
# action.
job "ebs-plugin" {
  type = "system"

  group "nodes" {
    task "plugin" {
      driver = "docker"

      config {
        image      = "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.30.0"
        privileged = true
      }

      csi_plugin {
        id             = "aws-ebs0"
        type           = "node"
        mount_dir      = "/csi"
        health_timeout = "1m30s"
      }

      identity {
        env  = true
        file = true
      }

      identity {
        name          = "vault_default"
        aud           = ["vault.io"]
        ttl           = "1h"
        change_mode   = "signal"
        change_signal = "SIGHUP"
        file          = true
      }

      action "flush-cache" {
        command = "/bin/flush"
        args    = ["--all"]
      }
    }
  }
}
