variable "a" {
  type = list
}
job "x" {}
