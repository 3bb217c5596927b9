job "x" {
  meta {
    a = index(["a"], "a")
  }
}
