# affinity (weights, shorthand operators, operator left out) and spread with
# targets, at job and group level.
job "placement" {
  datacenters = ["us-east-1", "us-west-2"]

  affinity {
    attribute = "${node.datacenter}"
    value     = "us-west-2"
    weight    = 100
  }

  spread {
    attribute = "${node.datacenter}"
    weight    = 100

    target "us-east-1" {
      percent = 60
    }

    target "us-west-2" {
      percent = 40
    }
  }

  group "workers" {
    count = 10

    affinity {
      attribute        = "${meta.tags}"
      set_contains_any = "ssd,nvme"
      weight           = -50
    }

    affinity {
      attribute = "${attr.cpu.numcores}"
      operator  = ">="
      value     = "8"
    }

    spread {
      attribute = "${meta.rack}"
    }

    task "worker" {
      driver = "exec"

      config {
        command = "/usr/local/bin/worker"
      }
    }
  }
}
