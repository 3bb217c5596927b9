# dynamic blocks: groups made from a list of objects (labels give the names,
# the iterator is named after the block type), ports made from a map with a
# custom iterator, and constraints made from a list; expanded in for_each
# order and decoded like literal blocks.
variable "groups" {
  default = [
    { name = "alpha", count = 1 },
    { name = "beta", count = 2 },
    { name = "gamma", count = 3 },
  ]
}

locals {
  ports = {
    http    = 8080
    metrics = 9090
  }
  kernels = ["linux", "darwin"]
}

job "fleet" {
  datacenters = ["dc1"]

  dynamic "group" {
    for_each = var.groups
    labels   = [group.value.name]

    content {
      count = group.value.count

      meta {
        index = group.key
      }

      network {
        dynamic "port" {
          for_each = local.ports
          iterator = p
          labels   = [p.key]

          content {
            to = p.value
          }
        }
      }

      dynamic "constraint" {
        for_each = group.value.count > 1 ? local.kernels : []

        content {
          attribute = "${attr.kernel.name}"
          operator  = "!="
          value     = constraint.value
        }
      }

      task "server" {
        driver = "exec"

        config {
          command = "/bin/${group.value.name}"
        }

        env {
          GROUP_ID = format("id:%s", group.value.name)
        }
      }
    }
  }
}
