package sim

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// threadNice returns the nice value of the calling goroutine's thread.
func threadNice(t *testing.T) int {
	t.Helper()
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0)
	if err != nil {
		t.Fatal(err)
	}
	return 20 - prio
}

// lowerThreadPriority lowers its own thread only, and a background
// simulation leaves no thread at a lower priority behind.
func TestBackgroundLowersItsOwnThreadOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	base := threadNice(t)
	got := make(chan int)
	go func() {
		runtime.LockOSThread() // ends with the goroutine, never reused
		lowerThreadPriority()
		got <- threadNice(t)
	}()
	if n := <-got; n != min(base+backgroundNice, 19) {
		t.Errorf("nice %d after lowerThreadPriority, want %d", n, min(base+backgroundNice, 19))
	}
	if n := threadNice(t); n != base {
		t.Errorf("the caller's thread went from nice %d to %d", base, n)
	}

	req := Request{Limit: "100/1m", Pattern: &Pattern{Name: PatternSpike}, Chart: "svg"}
	want, err := Simulate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.Background = true
	back, err := Simulate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range want.Result.Algorithms {
		if back.Result.Algorithms[i] != a {
			t.Errorf("in the background: %+v, want %+v", back.Result.Algorithms[i], a)
		}
	}
	if string(back.Chart) != string(want.Chart) {
		t.Error("the chart differs in the background")
	}
	// Threads made after it run at the process's priority.
	for range 4 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			got <- threadNice(t)
		}()
		if n := <-got; n != base {
			t.Errorf("a thread at nice %d after a background simulation, want %d", n, base)
		}
	}
	// A background simulation stops at its deadline too.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req = heavy()
	req.Background = true
	if _, err := Simulate(ctx, req); err != context.DeadlineExceeded {
		t.Errorf("err %v, want the deadline", err)
	}
}
