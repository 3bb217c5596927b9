# meta at job, group and task level, in block form and in attribute (map) form;
# numbers and bools in meta become strings.
job "meta-forms" {
  meta {
    team  = "payments"
    owner = "ana"
  }

  group "cache" {
    meta = {
      "tier.level" = "gold"
      replicas     = 3
    }

    task "redis" {
      driver = "docker"

      config {
        image = "redis:7"
      }

      meta {
        persistent = true
        version    = "7.2"
      }
    }
  }
}
