# change_mode = "script" with a change_script block; the parser fills the
# script's args ([]), timeout (5s) and fail_on_error (false) when left out.
job "reloader" {
  datacenters = ["dc1"]

  group "g" {
    task "haproxy" {
      driver = "docker"

      config {
        image = "haproxy:2.9"
      }

      template {
        data        = "{{ key \"haproxy/config\" }}"
        destination = "local/haproxy.cfg"
        change_mode = "script"

        change_script {
          command = "/usr/local/bin/reload-haproxy"
        }
      }

      template {
        data        = "{{ key \"haproxy/maps\" }}"
        destination = "local/hosts.map"
        change_mode = "script"

        change_script {
          command       = "/bin/sh"
          args          = ["-c", "kill -USR2 1"]
          timeout       = "20s"
          fail_on_error = true
        }
      }
    }
  }
}
