# dynamic blocks, for expressions and splats building repeated blocks.
locals {
  services = {
    web = 80
    api = 8080
  }
}

job "dyn" {
  group "g" {
    network {
      dynamic "port" {
        for_each = local.services
        labels   = [port.key]
        content {
          to = port.value
        }
      }
    }
    dynamic "service" {
      for_each = local.services
      iterator = svc
      content {
        name = svc.key
        port = svc.key
        tags = [for k, v in local.services : "${k}:${v}" if k != svc.key]
      }
    }
    task "t" {
      driver = "docker"
    }
  }
}
