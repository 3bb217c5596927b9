# A multiregion job: the rollout strategy and one region block per region
# (labels become names, in file order), each with its own count, datacenters,
# node pool and meta.
job "global-api" {
  multiregion {
    strategy {
      max_parallel = 1
      on_failure   = "fail_all"
    }

    region "west" {
      count       = 2
      datacenters = ["west-1", "west-2"]
      node_pool   = "edge"

      meta {
        region_code = "W"
      }
    }

    region "east" {
      count       = 1
      datacenters = ["east-1"]
    }
  }

  group "api" {
    count = 0

    task "api" {
      driver = "docker"

      config {
        image = "example/api:5"
      }
    }
  }
}
