# A Consul service mesh service (connect): a sidecar_service with tags, a
# proxy with an upstream (mesh gateway, free-form config) and an exposed
# health path, and the sidecar task's own resources and shutdown delay.
job "mesh" {
  datacenters = ["dc1"]

  group "api" {
    network {
      mode = "bridge"
    }

    service {
      name = "count-api"
      port = "9001"

      connect {
        sidecar_service {
          tags = ["mesh"]

          proxy {
            local_service_port = 9001

            upstreams {
              destination_name = "count-db"
              local_bind_port  = 5432

              mesh_gateway {
                mode = "local"
              }

              config {
                connect_timeout_ms = 5000
              }
            }

            expose {
              path {
                path            = "/health"
                protocol        = "http"
                local_path_port = 9001
                listener_port   = "expose"
              }
            }
          }
        }

        sidecar_task {
          shutdown_delay = "5s"

          resources {
            cpu    = 200
            memory = 128
          }
        }
      }
    }

    task "api" {
      driver = "docker"

      config {
        image = "hashicorpdev/counter-api:v3"
      }
    }
  }
}
