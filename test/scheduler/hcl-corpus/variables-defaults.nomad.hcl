# variable blocks with types and defaults (string, number, bool, list, map,
# object), used through var.* in attributes and in string templates; no
# values are given, so every default applies.
variable "datacenters" {
  description = "Where the job may run"
  type        = list(string)
  default     = ["dc1", "dc2"]
}

variable "image_tag" {
  type    = string
  default = "1.27"
}

variable "replicas" {
  type    = number
  default = 3
}

variable "canary" {
  type    = bool
  default = false
}

variable "labels" {
  type = map(string)
  default = {
    team = "web"
    tier = "frontend"
  }
}

variable "limits" {
  type = object({
    cpu    = number
    memory = number
  })
  default = {
    cpu    = 500
    memory = 256
  }
}

job "web" {
  datacenters = var.datacenters

  meta = var.labels

  group "web" {
    count = var.replicas

    update {
      canary      = var.canary ? 1 : 0
      auto_revert = !var.canary
    }

    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:${var.image_tag}"
      }

      resources {
        cpu    = var.limits.cpu
        memory = var.limits.memory * 2
      }
    }
  }
}
