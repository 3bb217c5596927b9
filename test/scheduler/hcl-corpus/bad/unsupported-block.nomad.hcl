job "typo" {
  group "web" {
    taks "server" {
      driver = "docker"
    }
  }
}
