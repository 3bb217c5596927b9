job "x" {
  group "g${1}" {
  }
}
