job "x" {
  "quoted" = 1
}
