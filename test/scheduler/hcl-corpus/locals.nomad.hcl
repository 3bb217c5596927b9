# locals: computed once from variables, functions and other locals (written
# in any order, across two locals blocks), then used as local.*.
variable "env" {
  type    = string
  default = "prod"
}

locals {
  service_name = "${local.prefix}-checkout"
  replicas     = local.sizes[var.env]
}

locals {
  prefix = "shop-${var.env}"
  sizes = {
    dev  = 1
    prod = 4
  }
  common_tags = ["env-${var.env}", "team-shop"]
}

job "checkout" {
  name        = local.service_name
  datacenters = ["dc1"]

  group "api" {
    count = local.replicas

    task "api" {
      driver = "docker"

      config {
        image = "example/checkout:7"
      }

      service {
        name = local.service_name
        tags = concat(local.common_tags, ["http"])
        port = "8080"
      }
    }
  }
}
