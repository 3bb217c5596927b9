job "x" {
  meta {
    a = upper("a", "b")
  }
}
