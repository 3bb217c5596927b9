n = 2
tags = ["a"]
undeclared = 1
