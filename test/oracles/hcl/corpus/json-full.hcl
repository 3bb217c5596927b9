{
  "//": "HCL's JSON syntax: variables with a type expression and validation, locals, templates, labelled blocks in their object and array forms, free-form config with nested values, meta, constraints, services with checks, ports.",
  "variable": {
    "image": {
      "type": "string",
      "default": "redis:7",
      "validation": {
        "condition": "${strlen(var.image) > 3}",
        "error_message": "Too short."
      }
    },
    "ports": {
      "type": "list(number)",
      "default": [6379]
    }
  },
  "locals": {
    "team": "core",
    "label": "${upper(local.team)}-app"
  },
  "job": {
    "json-full": {
      "datacenters": ["dc1", "dc2"],
      "type": "service",
      "priority": 70,
      "meta": {
        "team": "${local.team}",
        "label": "${local.label}"
      },
      "constraint": [
        { "attribute": "${attr.kernel.name}", "value": "linux" },
        { "distinct_hosts": true }
      ],
      "update": {
        "max_parallel": 2,
        "canary": 1,
        "auto_promote": true
      },
      "group": [
        {
          "cache": {
            "count": 2,
            "network": {
              "port": {
                "db": { "to": 6379 },
                "admin": { "static": 9000 }
              }
            },
            "service": [
              {
                "name": "cache",
                "port": "db",
                "tags": ["a", "b"],
                "check": {
                  "type": "tcp",
                  "interval": "10s",
                  "timeout": "2s"
                }
              }
            ],
            "task": {
              "redis": [
                {
                  "driver": "docker",
                  "config": {
                    "image": "${var.image}",
                    "ports": ["db"],
                    "args": ["--port", "${var.ports[0]}"],
                    "labels": { "a": "b" }
                  },
                  "env": {
                    "HOME": "/data",
                    "ESCAPED": "$${NOT_INTERPOLATED}"
                  },
                  "resources": {
                    "cpu": 250,
                    "memory": 512
                  },
                  "template": {
                    "data": "line1\nline2 {{ env \"NOMAD_ALLOC_ID\" }}\n",
                    "destination": "local/x.conf"
                  }
                }
              ]
            }
          }
        },
        {
          "worker": {
            "task": {
              "w": { "driver": "exec", "config": { "command": "/bin/w" } }
            }
          }
        }
      ]
    }
  }
}
