job "web" {
  group "g" {
    restart {
      interval = "1d"
    }
  }
}
