package client

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBackoffIsFullJitterWithinItsBounds(t *testing.T) {
	base, cap := 100*time.Millisecond, 3*time.Second
	for retry := range 70 { // far beyond 2^63: doubling must saturate, not wrap
		ceil := cap
		if retry < 5 {
			ceil = base << retry
		}
		var lo, hi time.Duration = ceil, 0
		for range 2000 {
			d := backoff(base, cap, retry)
			if d < 0 || d > ceil {
				t.Fatalf("retry %d: backoff %v outside [0, %v]", retry, d, ceil)
			}
			lo, hi = min(lo, d), max(hi, d)
		}
		// Full jitter spreads over the whole range, not around its top.
		if lo > ceil/10 || hi < ceil*9/10 {
			t.Errorf("retry %d: 2000 draws span only [%v, %v] of [0, %v]", retry, lo, hi, ceil)
		}
	}
}

// A policy whose backoff is unbounded (the largest Duration as its base or
// cap) refuses the wait, as it does any wait beyond MaxWait: it never
// panics drawing it.
func TestUnboundedBackoffIsAWaitTooLong(t *testing.T) {
	for _, p := range []RetryPolicy{
		{BackoffBase: math.MaxInt64},
		{BackoffCap: math.MaxInt64, MaxRetries: 80},
		{BackoffBase: math.MaxInt64, MaxWait: -1},
	} {
		r := NewRetries(p)
		for retry := range 80 {
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("%+v, retry %d: panic %v", p, retry, v)
					}
				}()
				if _, err := r.Next(context.Background(), retry, 0, false); err != nil &&
					!errors.Is(err, ErrWaitTooLong) && !errors.Is(err, ErrNoRetry) {
					t.Fatalf("%+v, retry %d: %v", p, retry, err)
				}
			}()
		}
	}
}

func TestServerWait(t *testing.T) {
	spent := RateLimit{Remaining: 0, Reset: 20 * time.Second}
	cases := []struct {
		name     string
		ra       time.Duration
		hasRA    bool
		rl       RateLimit
		hasRL    bool
		want     time.Duration
		wantTold bool
	}{
		{"Retry-After alone", 5 * time.Second, true, RateLimit{}, false, 5 * time.Second, true},
		{"a spent quota's reset alone", 0, false, spent, true, 20 * time.Second, true},
		{"Retry-After takes precedence over a longer reset", 5 * time.Second, true, spent, true, 5 * time.Second, true},
		{"Retry-After takes precedence over a shorter reset", time.Minute, true, spent, true, time.Minute, true},
		{"a finer Retry-After than the reset's whole second is kept", 84 * time.Millisecond, true,
			RateLimit{Reset: time.Second}, true, 84 * time.Millisecond, true},
		{"a wait beyond an hour is an hour", 48 * time.Hour, true, RateLimit{}, false, time.Hour, true},
		{"the reset of a quota not spent is no reason to wait", 0, false, RateLimit{Remaining: 3, Reset: time.Hour}, true, 0, false},
		{"nothing said", 0, false, RateLimit{}, false, 0, false},
		{"Retry-After: 0 is said", 0, true, RateLimit{}, false, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, told := serverWait(c.ra, c.hasRA, c.rl, c.hasRL, 1)
			if got != c.want || told != c.wantTold {
				t.Errorf("got %v, %v; want %v, %v", got, told, c.want, c.wantTold)
			}
		})
	}
}

func TestBudgetAllowsTheFloorThenTheRatio(t *testing.T) {
	p := RetryPolicy{BudgetFloor: 3, BudgetRatio: 0.25}.withDefaults()
	b := newBudget(&p)
	for i := range 3 {
		if !b.withdraw() {
			t.Fatalf("retry %d of the floor refused", i)
		}
	}
	if b.withdraw() {
		t.Fatal("a retry beyond the floor was allowed before any request")
	}
	retries := 0
	for range 100 {
		b.deposit()
		if b.withdraw() {
			retries++
		}
	}
	if retries != 25 {
		t.Errorf("100 requests earned %d retries, want 25", retries)
	}
	// A quiet spell does not bank more than the floor.
	for range 1000 {
		b.deposit()
	}
	n := 0
	for b.withdraw() {
		n++
	}
	if n != 3 {
		t.Errorf("after 1000 requests without retries, %d retries at once; want the floor, 3", n)
	}
}

func TestBudgetDefaultsAndSwitches(t *testing.T) {
	p := RetryPolicy{}.withDefaults()
	if p.MaxRetries != 3 || p.BudgetFloor != 10 || p.BudgetRatio != 0.1 || p.MaxWait != time.Minute ||
		p.BackoffBase != 100*time.Millisecond || p.BackoffCap != 10*time.Second {
		t.Errorf("defaults %+v", p)
	}
	if p := (RetryPolicy{MaxRetries: -1}).withDefaults(); p.MaxRetries != 0 {
		t.Errorf("MaxRetries -1 gives %d", p.MaxRetries)
	}
	p = RetryPolicy{BudgetRatio: -1}.withDefaults()
	b := newBudget(&p)
	for range 1000 {
		if !b.withdraw() {
			t.Fatal("a disabled budget refused a retry")
		}
	}
	p = RetryPolicy{BudgetFloor: -1, BudgetRatio: 0.5}.withDefaults()
	b = newBudget(&p)
	if b.withdraw() {
		t.Error("no floor, yet a retry before any request")
	}
	b.deposit()
	b.deposit()
	if !b.withdraw() || b.withdraw() {
		t.Error("two requests at ratio 0.5 should earn exactly one retry")
	}
}

func TestWhichRequestsAreRetried(t *testing.T) {
	req := func(method string, body io.Reader, hdr ...string) *http.Request {
		r, _ := http.NewRequest(method, "http://api.example/x", body)
		for i := 0; i < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	opaque := func(method string) *http.Request {
		r := req(method, nil)
		r.Body = io.NopCloser(strings.NewReader("once")) // no GetBody
		return r
	}
	cases := []struct {
		name                string
		r                   *http.Request
		idempotent, rewinds bool
	}{
		{"GET", req("GET", nil), true, true},
		{"HEAD", req("HEAD", nil), true, true},
		{"OPTIONS", req("OPTIONS", nil), true, true},
		{"PUT with a rewindable body", req("PUT", strings.NewReader("x")), true, true},
		{"DELETE", req("DELETE", nil), true, true},
		{"POST is not idempotent", req("POST", strings.NewReader("x")), false, true},
		{"PATCH is not idempotent", req("PATCH", strings.NewReader("x")), false, true},
		{"POST with an Idempotency-Key is", req("POST", strings.NewReader("x"), "Idempotency-Key", "k1"), true, true},
		{"POST with an X-Idempotency-Key is", req("POST", nil, "X-Idempotency-Key", "k1"), true, true},
		{"PUT whose body cannot be read twice cannot be retried", opaque("PUT"), true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := idempotent(c.r); got != c.idempotent {
				t.Errorf("idempotent = %v", got)
			}
			if got := rewindable(c.r); got != c.rewinds {
				t.Errorf("rewindable = %v", got)
			}
		})
	}
}
