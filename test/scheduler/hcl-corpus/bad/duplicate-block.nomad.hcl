job "web" {
  update {
    max_parallel = 1
  }

  update {
    max_parallel = 2
  }
}
