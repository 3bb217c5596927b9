# Encoding and hash functions (hcl2/functions/encoding, crypto): JSON, CSV,
# base64 and URL encoding and hashes, evaluated when the file is parsed (YAML:
# functions-yaml).
locals {
  settings = {
    name    = "web"
    workers = 4
    tags    = ["a", "b"]
  }
}

job "encodings" {
  datacenters = ["dc1"]

  meta {
    json_text   = jsonencode(local.settings)
    from_json   = jsondecode("{\"level\":\"debug\",\"n\":3}").level
    b64         = base64encode("hello nomad")
    from_b64    = base64decode("c3RhbmRpbg==")
    url         = urlencode("a b&c=d")
    from_csv    = csvdecode("host,port\nweb1,80\nweb2,81\n")[1].port
    md5_hash    = md5("nomad")
    sha1_hash   = sha1("nomad")
    sha256_hash = sha256("nomad")
  }

  group "g" {
    task "t" {
      driver = "docker"

      config {
        image   = "example/encodings:1"
        decoded = jsondecode("{\"ports\":[80,443],\"tls\":true}")
        rows    = csvdecode("a,b\n1,2\n")
      }
    }
  }
}
