{
  "variable": {
    "n": { "type": "number" },
    "name": { "type": "string", "default": "x" }
  },
  "job": {
    "json-vars": {
      "group": {
        "g": {
          "count": "${var.n}",
          "task": { "t": { "driver": "docker", "meta": { "name": "${var.name}" } } }
        }
      }
    }
  }
}
