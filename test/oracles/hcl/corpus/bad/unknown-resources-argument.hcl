job "x" {
  group "g" {
    task "t" {
      driver = "docker"
      resources {
        secretz = 5
      }
    }
  }
}
