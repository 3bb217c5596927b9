# A small web service for `standin job run` / `job plan` (docs/cli.md and
# test/cli-job.test.ts use it): its count and image tag are variables.
variable "count" {
  type    = number
  default = 2
}

variable "tag" {
  type    = string
  default = "1.27"
}

job "web" {
  datacenters = ["dc1"]

  group "web" {
    count = var.count

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:${var.tag}"
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
