job "x" {
  meta {
    a = reverse(["a", "b"])
  }
}
