package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A server that announces a wait far in the future (a reset of a year, a
// Retry-After of years: a bug, or a clock gone wrong) holds its host for
// an hour at most; then one probe asks again.
func TestAWaitFarInTheFutureHoldsTheHostAnHourAtMost(t *testing.T) {
	const year = 365 * 24 * time.Hour
	for _, c := range []struct {
		name  string
		learn bool
		r     response
	}{
		{"a spent quota's reset", true, ok200(t0, 0, year)},
		{"a 429's reset", true, response{arrived: true, at: t0, status: 429, rl: RateLimit{Reset: year}, hasRL: true}},
		{"a 429's Retry-After", true, response{arrived: true, at: t0, status: 429, ra: maxHint, hasRA: true}},
		{"a 503's Retry-After", false, response{arrived: true, at: t0, status: 503, ra: maxHint, hasRA: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHostState(c.learn, 0)
			h.finish(mustGrant(t, h, t0, "first"), c.r)
			mustWait(t, h, t0, t0.Add(maxServerWait), "at once")
			if tk := mustGrant(t, h, t0.Add(maxServerWait), "after the longest wait"); c.learn && !tk.probe {
				t.Error("the request after the longest wait is not a probe")
			}
		})
	}
	t.Run("a retry's wait", func(t *testing.T) {
		r := NewRetries(RetryPolicy{MaxWait: -1})
		wait, told := serverWait(maxHint, true, RateLimit{Reset: year}, true, 1)
		if !told {
			t.Fatal("the server's wait is not told")
		}
		if got, err := r.Next(context.Background(), 0, wait, told); err != nil || got != maxServerWait {
			t.Errorf("retry after %v, %v; want %v", got, err, maxServerWait)
		}
		if got, err := r.Next(context.Background(), 0, year, true); err != nil || got != maxServerWait {
			t.Errorf("Next of a year's wait: %v, %v; want %v", got, err, maxServerWait)
		}
		if _, err := NewRetries(RetryPolicy{}).Next(context.Background(), 0, year, true); !errors.Is(err, ErrWaitTooLong) {
			t.Errorf("a year's wait with the default MaxWait: %v, want ErrWaitTooLong", err)
		}
	})
}
