# template blocks: inline data in a heredoc (consul-template's {{ }} and the
# runtime ${NOMAD_*} variables stay as written), a source file with a signal,
# and env templates; the parser fills change_mode, perms, splay and
# error_on_missing_key when they are left out.
job "templated" {
  datacenters = ["dc1"]

  group "app" {
    task "web" {
      driver = "docker"

      config {
        image = "example/web:1.0"
      }

      template {
        data        = <<EOT
listen = ":{{ env "NOMAD_PORT_http" }}"
{{ range service "db" }}db = "{{ .Address }}:{{ .Port }}"{{ end }}
EOT
        destination = "local/app.toml"
      }

      template {
        source          = "local/nginx.conf.tpl"
        destination     = "${NOMAD_TASK_DIR}/nginx.conf"
        change_mode     = "signal"
        change_signal   = "SIGHUP"
        splay           = "30s"
        perms           = "0600"
        uid             = 1000
        gid             = 1000
        left_delimiter  = "[["
        right_delimiter = "]]"

        wait {
          min = "2s"
          max = "1m"
        }
      }

      template {
        data                 = "DB_PASSWORD={{ with secret \"secret/data/db\" }}{{ .Data.data.password }}{{ end }}"
        destination          = "secrets/db.env"
        env                  = true
        change_mode          = "noop"
        vault_grace          = "15s"
        error_on_missing_key = true
      }
    }
  }
}
