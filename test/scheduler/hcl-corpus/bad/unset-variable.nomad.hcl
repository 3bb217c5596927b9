variable "region" {
  type = string
}

job "web" {
  region = var.region
}
