job "x" {
  meta {
    a = file("/etc/passwd")
  }
}
