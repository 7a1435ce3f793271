package sim

import (
	"context"
	"runtime"
)

// background runs Simulate(ctx, req) with one worker on a goroutine locked
// to an OS thread of its own, whose scheduling priority it lowers first
// (lowerThreadPriority). The thread exits with the goroutine, so no other
// goroutine ever runs at that priority.
func background(ctx context.Context, req Request) (*Response, error) {
	req.Background, req.Workers = false, 1
	type result struct {
		resp *Response
		err  error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		lowerThreadPriority()
		resp, err := Simulate(ctx, req)
		done <- result{resp, err}
	}()
	r := <-done
	return r.resp, r.err
}
