# HCL's own template directives (%{ for }, %{ if }) are evaluated at parse
# time, in quoted strings and in heredocs. <<- strips the indentation common
# to the lines that start lines; a ~ strip marker runs first, so the line
# after "%{ for … ~}" no longer starts a line and keeps its indentation
# (HCL's parseTemplateParts trims, then flushHeredocTemplateParts counts).
variable "upstreams" {
  type    = list(string)
  default = ["10.0.0.1:80", "10.0.0.2:80"]
}

variable "debug" {
  type    = bool
  default = true
}

job "directives" {
  datacenters = ["dc1"]

  group "lb" {
    task "nginx" {
      driver = "docker"

      config {
        image = "nginx:1.27"
      }

      env {
        LOG_LEVEL = "%{ if var.debug }debug%{ else }info%{ endif }"
        COUNT     = "%{ for u in var.upstreams }+%{ endfor }"
      }

      template {
        destination = "local/plain.conf"
        data        = <<-EOT
          worker_processes ${length(var.upstreams)};
            daemon off;
          EOT
      }

      template {
        destination = "local/upstreams.conf"
        data        = <<EOT
upstream backend {
%{ for addr in var.upstreams ~}
  server ${addr};
%{ endfor ~}
}
EOT
      }

      template {
        destination = "local/flush-and-strip.conf"
        data        = <<-EOT
          upstream backend {
          %{ for addr in var.upstreams ~}
            server ${addr};
          %{ endfor ~}
          }
          EOT
      }
    }
  }
}
