# constraint blocks: the plain attribute/operator/value form (operator defaults
# to "="), the shorthand attributes (version, semver, regexp, set_contains),
# distinct_hosts and distinct_property, at job, group and task level.
job "constraints" {
  datacenters = ["dc1"]

  constraint {
    attribute = "${attr.kernel.name}"
    value     = "linux"
  }

  constraint {
    attribute = "${attr.cpu.arch}"
    operator  = "!="
    value     = "arm64"
  }

  constraint {
    attribute = "${attr.nomad.version}"
    version   = ">= 1.6.0"
  }

  group "db" {
    constraint {
      distinct_hosts = true
    }

    constraint {
      distinct_property = "${meta.rack}"
      value             = "2"
    }

    constraint {
      attribute = "${node.class}"
      regexp    = "^storage-.*$"
    }

    task "postgres" {
      driver = "docker"

      config {
        image = "postgres:16"
      }

      constraint {
        attribute    = "${attr.driver.docker.volumes.enabled}"
        set_contains = "true"
      }

      constraint {
        attribute = "${attr.os.version}"
        semver    = "~> 22.04"
      }
    }
  }
}
