{
  "job": {
    "json": {
      "datacenters": ["dc1"],
      "group": {
        "g": {
          "count": 2,
          "task": {
            "t": {
              "driver": "docker",
              "config": {
                "image": "redis:7"
              }
            }
          }
        }
      }
    }
  }
}
