# A host-mode network whose ports are all static: DynamicPorts stays null.
job "dns" {
  type = "system"

  group "coredns" {
    network {
      port "dns" {
        static = 53
      }
      port "health" {
        static = 8080
      }
    }

    task "coredns" {
      driver = "docker"

      config {
        image        = "coredns/coredns:1.11.1"
        network_mode = "host"
      }
    }
  }
}
