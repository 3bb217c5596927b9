job {
  datacenters = ["dc1"]
}
