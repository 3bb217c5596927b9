job "x" {
  group "g" {
    count = var.missing
  }
}
