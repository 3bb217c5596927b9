variable "s" {
  type    = set(string)
  default = ["b", "a", "b"]
}
job "x" {
  meta {
    s = join(",", var.s)
    u = join(",", setunion(["z"], ["y", "x"]))
    n = jsonencode(setunion([3, 1], [2]))
  }
}
