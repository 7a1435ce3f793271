// Package frameworks shows httplimit's middleware in the Go routers people
// use — chi, gin and echo — as runnable examples. It is a module of its
// own, so that sluice's own module depends on none of them: `make test`
// runs its tests (cd examples/frameworks && go test ./...).
package frameworks
