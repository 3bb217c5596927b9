locals {
  a = local.nope
}
job "x" {
  meta { v = local.a }
}
