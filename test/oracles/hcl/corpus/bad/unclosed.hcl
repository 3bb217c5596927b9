job "x" {
  group "g" {
