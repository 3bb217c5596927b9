variable "n" {
  type = number
}
job "x" {
  group "g" {
    count = var.n
  }
}
