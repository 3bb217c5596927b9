image    = "redis:7"
ports    = [6379, 16379]
labels   = { tier = "cache" }
settings = { replicas = 3, canary = true }
