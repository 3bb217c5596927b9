# Connect gateways: ingress (listeners, services, TLS, header modifiers),
# terminating (linked services), mesh, and the gateway proxy (bind
# addresses, connect timeout left unset so canonicalize fills Consul's 5 s).
job "gateways" {
  datacenters = ["dc1"]

  group "ingress" {
    network {
      mode = "bridge"
      port "inbound" {
        static = 8080
        to     = 8080
      }
    }

    service {
      name = "ingress-gw"
      port = "8080"

      connect {
        gateway {
          proxy {
            envoy_gateway_bind_tagged_addresses = false
            envoy_gateway_bind_addresses "uuid-api" {
              address = "0.0.0.0"
              port    = 8080
            }
            envoy_dns_discovery_type = "LOGICAL_DNS"
            config {
              foo = "bar"
            }
          }

          ingress {
            tls {
              enabled         = true
              tls_min_version = "TLSv1_2"
              cipher_suites   = ["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]
            }

            listener {
              port     = 8080
              protocol = "http"
              service {
                name  = "uuid-api"
                hosts = ["example.com"]
                request_headers {
                  add {
                    X-Added = "yes"
                  }
                  remove = ["X-Drop"]
                }
                max_connections = 10
              }
            }

            listener {
              port = 9090
              service {
                name = "raw"
              }
            }
          }
        }
      }
    }
  }

  group "terminating" {
    service {
      name = "term-gw"

      connect {
        gateway {
          proxy {
            connect_timeout = "3s"
          }
          terminating {
            service {
              name    = "legacy"
              ca_file = "/etc/ca.pem"
              sni     = "legacy.example.com"
            }
          }
        }
      }
    }
  }

  group "mesh" {
    service {
      name = "mesh-gw"

      connect {
        gateway {
          proxy {}
          mesh {}
        }
      }
    }
  }
}
