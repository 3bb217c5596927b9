# Every function of Nomad 1.9.7's jobspec2 (functions.go) that gives the
# same answer on every run (bcrypt salts at random, uuidv4 draws: uuidv4 is
# compared as "a UUID"), each in a meta value so the answer shows its result.
locals {
  list = ["b", "a", "c", "a"]
  map  = convert({ x = 1, y = 2 }, map(number))
}

job "functions" {
  meta {
    abs             = abs(-3.5)
    base64decode    = base64decode("aGVsbG8=")
    base64encode    = base64encode("hello")
    can             = can(local.map.z)
    ceil            = ceil(1.2)
    chomp           = chomp("line\n")
    chunklist       = jsonencode(chunklist(local.list, 3))
    cidrhost        = cidrhost("10.0.0.0/24", 5)
    cidrnetmask     = cidrnetmask("10.0.0.0/12")
    cidrsubnet      = cidrsubnet("10.0.0.0/16", 8, 2)
    cidrsubnets     = jsonencode(cidrsubnets("10.0.0.0/16", 4, 4, 8))
    coalesce        = coalesce(null, "x")
    coalescelist    = jsonencode(coalescelist([], ["y"]))
    compact         = jsonencode(compact(["a", "", "b"]))
    concat          = jsonencode(concat(["a"], ["b"]))
    contains        = contains(local.list, "c")
    convert         = jsonencode(convert([1, 2], list(string)))
    csvdecode       = jsonencode(csvdecode("a,b\n1,2\n"))
    distinct        = jsonencode(distinct(local.list))
    element         = element(local.list, 5)
    flatten         = jsonencode(flatten([["a"], [["b"]]]))
    floor           = floor(1.8)
    format          = format("%s-%03d-%.2f-%q", "x", 7, 3.14159, "q")
    formatdate      = formatdate("YYYY-MM-DD hh:mm", "2024-03-05T07:08:09Z")
    formatlist      = jsonencode(formatlist("%s=%d", ["a", "b"], [1, 2]))
    indent          = indent(2, "a\nb")
    index           = index(local.list, 2)
    join            = join(",", local.list)
    jsondecode      = jsondecode("{\"k\": [1, true]}").k[1]
    jsonencode      = jsonencode({ b = 1, a = [true, null] })
    keys            = jsonencode(keys(local.map))
    length          = length(local.list)
    log             = log(8, 2)
    lookup          = lookup(local.map, "z", 9)
    lower           = lower("ABC")
    max             = max(1, 5, 3)
    md5             = md5("x")
    merge           = jsonencode(merge({ a = 1 }, { b = 2 }))
    min             = min(4, 2)
    parseint        = parseint("-101", 2)
    pow             = pow(3, 3)
    range           = jsonencode(range(1, 10, 3))
    reverse         = reverse("stressed")
    replace         = replace("a-b-c", "-", "+")
    regex_replace   = regex_replace("a1b22", "[0-9]+", "#")
    setintersection = jsonencode(setintersection(["a", "b"], ["b", "c"]))
    setproduct      = jsonencode(setproduct(["a", "b"], [1, 2]))
    setunion        = jsonencode(setunion(["b"], ["a"]))
    sha1            = sha1("x")
    sha256          = sha256("x")
    sha512          = sha512("x")
    signum          = signum(-2)
    slice           = jsonencode(slice(local.list, 1, 3))
    sort            = jsonencode(sort(local.list))
    split           = jsonencode(split(",", "a,b,,c"))
    strlen          = strlen("héllo")
    strrev          = strrev("abc")
    substr          = substr("hello world", 6, -1)
    timeadd         = timeadd("2024-01-01T00:00:00Z", "36h30m")
    title           = title("hello world")
    trim            = trim("xxhixx", "x")
    trimprefix      = trimprefix("prefix-x", "prefix-")
    trimspace       = trimspace("  x  ")
    trimsuffix      = trimsuffix("x.txt", ".txt")
    try             = try(local.map.z, "fallback")
    upper           = upper("abc")
    urlencode       = urlencode("a b&c")
    uuidv5          = uuidv5("dns", "example.com")
    values          = jsonencode(values(local.map))
    yamldecode      = jsonencode(yamldecode("a: [1, 2]\nb: x\n"))
    yamlencode      = yamlencode({ a = [1, 2] })
    zipmap          = jsonencode(zipmap(["a", "b"], [1, 2]))
  }

  group "g" {
    task "t" {
      driver = "docker"
      env {
        ID_LENGTH = strlen(uuidv4())
      }
    }
  }
}
