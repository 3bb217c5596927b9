job "x" {
  group "g" {
    service {
      connect {
        sidecar_task {
          identity {
            aud = ["x"]
          }
        }
      }
    }
  }
}
