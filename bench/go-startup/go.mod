module standin.local/bench/startup

go 1.21

require github.com/standin-dev/standin/go v0.0.0

replace github.com/standin-dev/standin/go => ../../go
