# The variables of variables-validation, given an environment its validation
# rule refuses: the value's place in the Variables content, the rule's message
# and where the rule is.
variables {
  owner   = "platform"
  retries = 2
}

variable "environment" {
  type = string

  validation {
    condition     = contains(["dev", "staging", "prod"], var.environment)
    error_message = "The environment must be dev, staging or prod."
  }
}

variable "port" {
  type    = number
  default = 8443

  validation {
    condition     = var.port > 1024 && var.port < 65536
    error_message = "The port must be an unprivileged port."
  }
}

job "validated" {
  datacenters = ["dc1"]
  namespace   = var.environment

  meta {
    owner   = var.owner
    retries = var.retries
  }

  group "g" {
    network {
      port "https" {
        static = var.port
      }
    }

    restart {
      attempts = var.retries
    }

    task "t" {
      driver = "docker"

      config {
        image = "example/secure:${var.environment}"
      }
    }
  }
}
