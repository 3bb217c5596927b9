# Workload identities: a task whose only identity is the default one keeps
# an empty Identities list; named ones stay; services carry theirs.
job "ids" {
  group "g" {
    task "only-default" {
      driver = "docker"
      identity {
        env  = true
        file = true
      }
    }
    task "named" {
      driver = "docker"
      identity {
        name = "default"
        aud  = ["nomad"]
      }
      identity {
        name        = "vault_default"
        aud         = ["vault.io"]
        ttl         = "1h"
        change_mode = "signal"
        change_signal = "SIGHUP"
      }
      service {
        name     = "s"
        provider = "nomad"
        identity {
          aud = ["consul.io"]
        }
      }
    }
  }
}
