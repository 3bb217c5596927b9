# The smallest job file: a job block with its label and nothing else.
job "hello" {}
