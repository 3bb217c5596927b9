# Runtime interpolations (${NOMAD_*}, ${attr.*}, ${node.*}, ${meta.*}) are not
# HCL variables: the parser leaves their text as written, even bare and next to
# a real var.* reference; $${ and %%{ escape to a literal ${ and %{.
variable "stage" {
  default = "blue"
}

job "runtime" {
  datacenters = ["dc1"]
  region      = meta.region_override

  constraint {
    attribute = "${attr.unique.hostname}"
    operator  = "regexp"
    value     = "^web-[0-9]+$"
  }

  group "g" {
    task "t" {
      driver = "docker"

      config {
        image   = "example/runtime:1"
        command = "${NOMAD_TASK_DIR}/start.sh"
        args    = ["--node", "${node.unique.name}", "--dc", "${node.datacenter}", "--stage", var.stage]
      }

      env {
        ALLOC_DIR    = "${NOMAD_ALLOC_DIR}"
        ADDR         = "${NOMAD_IP_http}:${NOMAD_PORT_http}"
        MIXED        = "${var.stage}-${NOMAD_ALLOC_INDEX}"
        RACK         = "${meta.rack}"
        SPACED       = "${ NOMAD_JOB_NAME }"
        LITERAL_VAR  = "$${var.stage}"
        LITERAL_PCT  = "%%{not-a-directive}"
        INDEXED      = "${attr.unique.network.ip-address}"
      }

      template {
        data        = "port={{ env \"NOMAD_PORT_http\" }}"
        destination = "${NOMAD_SECRETS_DIR}/app.env"
      }
    }
  }
}
