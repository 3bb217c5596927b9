n = 4
name = "from-vars"
