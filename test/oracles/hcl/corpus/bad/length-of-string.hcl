job "x" {
  meta {
    a = length("abc")
  }
}
