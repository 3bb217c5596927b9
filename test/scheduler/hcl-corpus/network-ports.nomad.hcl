# A bridge network with static, dynamic and mapped ("to") ports, a host
# network, dns settings and a hostname; a port with only "to" stays dynamic.
job "ingress" {
  datacenters = ["dc1"]

  group "proxy" {
    network {
      mode     = "bridge"
      hostname = "proxy-${NOMAD_ALLOC_INDEX}"

      port "http" {
        static = 80
        to     = 8080
      }

      port "https" {
        static       = 443
        host_network = "public"
      }

      port "metrics" {}

      port "admin" {
        to = 9901
      }

      dns {
        servers  = ["10.0.0.2", "10.0.0.3"]
        searches = ["service.consul"]
        options  = ["ndots:2"]
      }
    }

    task "envoy" {
      driver = "docker"

      config {
        image = "envoyproxy/envoy:v1.31"
        ports = ["http", "https", "metrics", "admin"]
      }
    }
  }
}
