# Collection and numeric functions (hcl2/functions/collection, numeric), for
# expressions, splats and conditionals; in config only an object literal is
# wrapped in a list (a for expression making an object is not). As Nomad's
# own parser shows: `index` is cty's element-at-key, `reverse` reverses a
# string, and `length` counts collections (not an object literal).
locals {
  dcs = {
    us = ["us-1", "us-2"]
    eu = ["eu-1"]
  }
}

job "collections" {
  datacenters = distinct(flatten([local.dcs["us"], local.dcs["eu"], ["us-1"]]))

  meta = merge({ team = "core" }, { tier = "gold" }, { team = "platform" })

  group "g" {
    count = length(keys(local.dcs)) + max(3, 7, 1) - min(5, 4)

    task "t" {
      driver = "docker"

      config {
        image      = "example/collections:1"
        combined   = concat(["a"], ["b", "c"])
        fallback   = lookup({ dc1 = "x" }, "dc2", "fallback")
        sorted     = sort(["c", "a", "b"])
        reversed   = reverse("abc")
        sliced     = slice(["a", "b", "c", "d"], 1, 3)
        compacted  = compact(["a", "", "b"])
        wrapped    = element(["a", "b", "c"], 4)
        position   = index(["a", "b", "c"], 2)
        has_b      = contains(["a", "b"], "b")
        first_set  = coalesce(null, "picked")
        numbers    = range(3)
        chunks     = chunklist(["a", "b", "c"], 2)
        map_keys   = keys({ b = 1, a = 2 })
        map_values = values({ b = 1, a = 2 })
        rounded    = [ceil(1.2), floor(1.8), abs(-4), pow(2, 10), signum(-3)]
        parsed     = parseint("ff", 16)
        for_list   = [for s in ["x", "y"] : upper(s)]
        for_map    = { for k, v in { a = 1, b = 2 } : k => v * 10 }
        splat      = [{ n = "p" }, { n = "q" }][*].n
        ternary    = length(keys(local.dcs)) > 1 ? "many" : "one"
      }

      env = zipmap(["A", "B"], ["1", "2"])
    }
  }
}
