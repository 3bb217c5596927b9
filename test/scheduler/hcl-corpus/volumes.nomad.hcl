# A host volume and a CSI volume requested by the group (a map keyed by the
# label), mounted into the task with volume_mount.
job "storage" {
  datacenters = ["dc1"]

  group "db" {
    volume "data" {
      type      = "host"
      source    = "pg-data"
      read_only = false
    }

    volume "backups" {
      type            = "csi"
      source          = "ebs-backups"
      read_only       = true
      access_mode     = "single-node-reader-only"
      attachment_mode = "file-system"
      per_alloc       = true

      mount_options {
        fs_type     = "ext4"
        mount_flags = ["noatime"]
      }
    }

    task "postgres" {
      driver = "docker"

      config {
        image = "postgres:16"
      }

      volume_mount {
        volume      = "data"
        destination = "/var/lib/postgresql/data"
      }

      volume_mount {
        volume           = "backups"
        destination      = "/backups"
        read_only        = true
        propagation_mode = "host-to-task"
        selinux_label    = "z"
      }
    }
  }
}
