# Every job-level attribute of the job block, and id/name overriding the label.
job "label-only" {
  id          = "billing-api"
  name        = "Billing API"
  region      = "eu-west"
  namespace   = "payments"
  type        = "service"
  priority    = 70
  all_at_once = true
  datacenters = ["eu-west-1a", "eu-west-1b"]
  node_pool   = "payments-pool"

  group "api" {
    count = 3

    task "server" {
      driver = "docker"

      config {
        image = "registry.example.com/billing:2.4.1"
      }
    }
  }
}
