job "x" {
  update {
    stagger = "soon"
  }
}
