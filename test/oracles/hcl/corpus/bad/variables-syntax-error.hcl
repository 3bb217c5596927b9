variable "n" {
  type = number
}
variable "tags" {
  type = list(string)
}
job "x" {
  group "g" {
    count = var.n
    task "t" {
      driver = "docker"
      meta {
        tags = join(",", var.tags)
      }
    }
  }
}
