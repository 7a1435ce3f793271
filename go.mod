module github.com/sluice-dev/sluice

go 1.26

require (
	github.com/redis/rueidis v1.0.79
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
	pgregory.net/rapid v1.3.0
)

require golang.org/x/sys v0.47.0 // indirect
