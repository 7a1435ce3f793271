package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// BackoffCap bounds every backoff, as RetryPolicy documents ("a wait drawn
// uniformly from [0, min(BackoffCap, BackoffBase·2^retry)]"), even below
// the default base: a latency-bound caller that sets only BackoffCap to
// 50 ms never waits longer, and its policy keeps the cap it set (the
// defaulted base is lowered to it, not the cap raised to the base).
func TestABackoffCapBelowTheDefaultBaseIsKept(t *testing.T) {
	t.Parallel()
	const cap = 50 * time.Millisecond
	r := client.NewRetries(client.RetryPolicy{BackoffCap: cap, BudgetRatio: -1, MaxRetries: 1})
	if got := r.Policy().BackoffCap; got != cap {
		t.Errorf("Policy().BackoffCap = %v, want the %v set", got, cap)
	}
	longest := time.Duration(0)
	for range 64 {
		wait, err := r.Next(context.Background(), 0, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		longest = max(longest, wait)
	}
	if longest > cap {
		t.Errorf("a backoff of %v with BackoffCap %v; want every backoff within the cap", longest, cap)
	}
}
