# artifact blocks: options and headers maps, mode, destination (an empty
# destination is kept as ""), chown and insecure.
job "fetcher" {
  type        = "batch"
  datacenters = ["dc1"]

  group "g" {
    task "unpack" {
      driver = "exec"

      config {
        command = "local/bin/tool"
      }

      artifact {
        source      = "https://releases.example.com/tool/1.2.0/tool_linux_amd64.tar.gz"
        destination = "local/bin"

        options {
          checksum = "sha256:4f2c0c1b5a8e1d9b7e0a6c3d2f1e0b9a8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"
        }
      }

      artifact {
        source      = "https://config.example.com/app.json"
        destination = "local/app.json"
        mode        = "file"
        chown       = true
        insecure    = false

        headers {
          Authorization = "Bearer ${NOMAD_META_config_token}"
          User-Agent    = "nomad"
        }
      }

      artifact {
        source      = "git::https://github.com/example/scripts"
        destination = ""
      }
    }
  }
}
