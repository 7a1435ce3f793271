package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

// leaseQuota is the hourly limit of TestServeGivesLeasedUnitsBackOnSIGTERM:
// large enough that an idle lease is never worth giving back early (its
// units are far below 1% of it), so that only the shutdown gives them back.
const leaseQuota = 1_000_000

// SIGTERM ends `sluice serve` with every leased unit back in Redis: while it
// runs, the shared state counts the requests it admitted and the units it
// holds; once it has exited, exactly the requests it admitted.
func TestServeGivesLeasedUnitsBackOnSIGTERM(t *testing.T) {
	rs := redistest.Standalone(t)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer up.Close()
	client, err := redis.NewClient(redis.Options{Addrs: []string{rs.Addr}, Timeout: time.Second}) // a loaded machine may take more than the default 50 ms for HELLO
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	shared := redis.New(client, redis.WithTimeout(10*time.Second))
	// A window's end starts its count afresh: a run that crosses an hour
	// is run again, under a limit of another name (a state of its own).
	for attempt := 1; ; attempt++ {
		hour := time.Now().Unix() / 3600
		admitted, held, after := leaseThenTerminate(t, rs, up.URL, shared, fmt.Sprintf("per-hour-%d", attempt))
		if time.Now().Unix()/3600 != hour && attempt < 3 {
			continue
		}
		if held <= admitted {
			t.Fatalf("while serving, Redis counted %d units for %d admitted requests: the process held no lease", held, admitted)
		}
		if after != admitted {
			t.Fatalf("after SIGTERM Redis counts %d units, want the %d admitted (it counted %d while the leases were held)", after, admitted, held)
		}
		return
	}
}

// leaseThenTerminate runs `sluice serve` on rs with leases on
// and one hourly limit named name, sends it requests of one client until
// they are decided from a lease, then SIGTERM, and returns the requests it
// admitted and the units Redis counted before and after.
func leaseThenTerminate(t *testing.T, rs *redistest.Server, upstream string, shared *redis.Store, name string) (admitted, held, after int64) {
	t.Helper()
	p := startServe(t, "upstream: "+upstream+`
store:
  type: redis
  redis: {addresses: ["`+rs.Addr+`"], timeout: 10s, lease: auto}
plans:
  free:
    limits:
      - {name: `+name+`, algorithm: fixed-window, quantity: `+fmt.Sprint(leaseQuota)+`, window: 1h}
default_plan: free
anonymous_plan: free
`)
	for range 50 {
		resp, err := http.Get("http://" + p.public + "/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %d", admitted, resp.StatusCode)
		}
		admitted++
	}
	check := counted(t, rs, shared, name)
	held = check()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("sluice serve after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("sluice serve still running 15 s after SIGTERM")
	}
	return admitted, held, check()
}

// counted returns a function reading how many units Redis counts in the
// current window of the limit named name, for the one subject (the client)
// that has state under it: the limit less what a peek (cost 0) finds
// remaining.
func counted(t *testing.T, rs *redistest.Server, shared *redis.Store, name string) func() int64 {
	t.Helper()
	keys, err := rs.Keys("sluice:{*}:" + name)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 {
		t.Fatalf("keys of the limit %s in Redis: %q, want the one client's", name, keys)
	}
	subject, _, ok := strings.Cut(strings.TrimPrefix(keys[0], "sluice:{"), "}:")
	if !ok {
		t.Fatalf("key %q is not sluice:{subject}:limit", keys[0])
	}
	checks := []sluice.Check{{Key: subject, Limit: sluice.FixedWindow(leaseQuota, time.Hour).WithID(name)}}
	return func() int64 {
		out := make([]sluice.Status, 1)
		if err := shared.Apply(context.Background(), checks, out); err != nil {
			t.Fatal(err)
		}
		return leaseQuota - out[0].Remaining
	}
}
