job "x" {
  priority = "high"
}
