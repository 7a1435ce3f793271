package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
)

// The zero Client, APIGate and LimiterGate have nothing to ask: their
// calls return an error wrapping sluice.ErrStoreUnavailable at once. The
// zero Pacer and Retries work as NewPacer("", 0) and the recommended
// policy do. None panics or hangs.
func TestZeroValues(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var c client.Client
	_, checkErr := c.Check(ctx, client.CheckRequest{})
	var g client.APIGate
	var lg client.LimiterGate
	_, acquireErr := lg.Acquire(ctx, 1)
	for what, err := range map[string]error{
		"Client.Check":        checkErr,
		"Client.Settle":       c.Settle(ctx, "id", 200, nil),
		"Client.Gate.Wait":    c.Gate(client.CheckRequest{}).Wait(ctx, 1),
		"APIGate.Wait":        g.Wait(ctx, 1),
		"LimiterGate.Wait":    lg.Wait(ctx, 1),
		"LimiterGate.Acquire": acquireErr,
	} {
		if !errors.Is(err, sluice.ErrStoreUnavailable) {
			t.Errorf("%s: %v, want ErrStoreUnavailable", what, err)
		}
	}
	var p client.Pacer
	send, err := p.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("Pacer.Wait: %v", err)
	}
	send.Done(client.Answer{})
	var r client.Retries
	if got, want := r.Policy(), client.NewRetries(client.RetryPolicy{}).Policy(); got != want {
		t.Errorf("zero Retries' policy %+v, want the recommended %+v", got, want)
	}
	r.Call()
	if _, err := r.Next(ctx, 0, time.Millisecond, true); err != nil {
		t.Errorf("Retries.Next: %v", err)
	}
}
