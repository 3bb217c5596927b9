variable "a" {
  type    = list(any)
  default = []
}
job "x" {}
