module github.com/standin-dev/standin/go

go 1.21
