# yamlencode and yamldecode (hcl2/functions/encoding): YAML text from a value
# (keys quoted, as go-cty-yaml writes them) and a value from YAML text.
job "yaml" {
  datacenters = ["dc1"]

  meta {
    yaml_text = yamlencode({ name = "web" })
    from_yaml = yamldecode("replicas: 5").replicas
  }
}
