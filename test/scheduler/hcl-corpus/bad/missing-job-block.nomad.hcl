variable "region" {
  default = "eu"
}
