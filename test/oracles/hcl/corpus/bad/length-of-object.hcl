locals {
  m = { a = 1, b = 2 }
}
job "x" {
  meta {
    n = length(local.m)
  }
}
