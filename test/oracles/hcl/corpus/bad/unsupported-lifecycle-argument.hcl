job "x" {
  group "g" {
    task "t" {
      driver = "docker"
      lifecycle {
        hook = "prestart"
        bogus = 1
      }
    }
  }
}
