job "typo" {
  group "web" {
    cnt = 3
  }
}
