job "x" {
  meta {
    a = substr("a")
  }
}
