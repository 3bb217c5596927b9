# Variables: typed declarations with defaults and validation, a variables
# block, locals depending on them, and values from the request's
# Variables (variables.vars.hcl).
variable "image" {
  type = string
  validation {
    condition     = strlen(var.image) > 3
    error_message = "Image name too short."
  }
}

variable "ports" {
  type    = list(number)
  default = [80]
}

variable "labels" {
  type    = map(string)
  default = {}
}

variable "settings" {
  type = object({
    replicas = number
    canary   = bool
  })
}

variables {
  team = "core"
}

locals {
  name = "${var.team}-${replace(var.image, ":", "-")}"
}

job "vars" {
  meta {
    name   = local.name
    ports  = join(",", var.ports)
    labels = jsonencode(var.labels)
    canary = var.settings.canary
  }
  group "g" {
    count = var.settings.replicas
    task "t" {
      driver = "docker"
      config {
        image = var.image
        ports = [for p in var.ports : "p${p}"]
      }
    }
  }
}
