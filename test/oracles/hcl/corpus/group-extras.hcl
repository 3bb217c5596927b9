# Group blocks: disconnect, volume with mount options, ephemeral_disk,
# migrate, scaling, spread with targets, affinity, network with dns and cni,
# consul, shutdown_delay, prevent_reschedule_on_lost.
job "groups" {
  spread {
    attribute = "${node.datacenter}"
    target "dc1" {
      percent = 70
    }
    target "dc2" {
      percent = 30
    }
  }
  group "g" {
    count = 3
    shutdown_delay = "5s"
    prevent_reschedule_on_lost = true
    disconnect {
      lost_after = "1h"
      replace    = false
      reconcile  = "keep_original"
    }
    volume "data" {
      type            = "csi"
      source          = "vol"
      read_only       = true
      access_mode     = "single-node-reader-only"
      attachment_mode = "file-system"
      per_alloc       = true
      mount_options {
        fs_type     = "ext4"
        mount_flags = ["noatime"]
      }
    }
    ephemeral_disk {
      size   = 500
      sticky = true
    }
    migrate {
      max_parallel = 2
    }
    scaling {
      min = 1
      max = 10
      policy {
        cooldown = "1m"
        check "cpu" {
          source = "prometheus"
          query  = "avg(cpu)"
          strategy "target-value" {
            target = 70
          }
        }
      }
    }
    network {
      mode     = "bridge"
      hostname = "web"
      dns {
        servers = ["1.1.1.1"]
        options = ["ndots:2"]
      }
      cni {
        args = {
          "K8S_POD_NAMESPACE" = "default"
        }
      }
      port "http" {
        to           = 8080
        host_network = "public"
      }
    }
    consul {
      namespace = "ns"
      partition = "p"
    }
    task "t" {
      driver = "docker"
      volume_mount {
        volume      = "data"
        destination = "/data"
        selinux_label = "z"
      }
      scaling "cpu" {
        enabled = true
        max     = 1000
        policy {
          cooldown = "5m"
        }
      }
    }
  }
}
