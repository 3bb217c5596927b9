# String functions (hcl2/functions/string): results land in meta (strings),
# in the datacenters list and in the free-form config (which keeps types).
locals {
  raw_name = "  Checkout Service  "
}

job "strings" {
  datacenters = split(",", "dc1,dc2,dc3")

  meta {
    upper       = upper("web")
    lower       = lower("API")
    formatted   = format("%s-%03d", "node", 7)
    joined      = join(",", ["a", "b", "c"])
    replaced    = replace("a.b.c", ".", "-")
    trimmed     = trimspace(local.raw_name)
    slug        = lower(replace(trimspace(local.raw_name), " ", "-"))
    sub         = substr("hello world", 0, 5)
    titled      = title("hello world")
    no_prefix   = trimprefix("v1.2.3", "v")
    no_suffix   = trimsuffix("app.service", ".service")
    reversed    = strrev("abc")
    regex       = regex_replace("a1b22c333", "[0-9]+", "-")
    chomped     = chomp("line\n")
    trim_dashes = trim("--x--", "-")
    length      = strlen("hello")
  }

  group "g" {
    task "t" {
      driver = "docker"

      config {
        image    = "example/${lower("STRINGS")}:${format("%d.%d", 1, 2)}"
        pairs    = formatlist("%s=%s", ["a", "b"], ["1", "2"])
        indented = indent(2, "first\nsecond")
      }
    }
  }
}
