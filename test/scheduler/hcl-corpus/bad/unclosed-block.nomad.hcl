job "web" {
  group "g" {
    count = 1
  }
