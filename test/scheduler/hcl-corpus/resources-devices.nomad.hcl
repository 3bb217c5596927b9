# Task resources: cpu/cores/memory/memory_max/disk, a device request with its
# own constraint and affinity, and logs/ephemeral_disk at their levels.
job "training" {
  type        = "batch"
  datacenters = ["gpu"]

  group "trainer" {
    ephemeral_disk {
      size    = 2048
      sticky  = true
      migrate = true
    }

    task "pytorch" {
      driver = "docker"

      config {
        image = "pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime"
      }

      resources {
        cores      = 4
        memory     = 16384
        memory_max = 24576

        device "nvidia/gpu" {
          count = 2

          constraint {
            attribute = "${device.attr.memory}"
            operator  = ">="
            value     = "16 GiB"
          }

          affinity {
            attribute = "${device.model}"
            value     = "Tesla V100"
            weight    = 75
          }
        }
      }

      logs {
        max_files     = 3
        max_file_size = 25
      }
    }

    task "sidecar" {
      driver = "exec"

      config {
        command = "/bin/metrics-agent"
      }

      resources {
        cpu    = 250
        memory = 128
      }

      logs {
        disabled = true
      }
    }
  }
}
