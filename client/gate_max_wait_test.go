package client

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// TurnHeld reports whether a waiter of g holds its turn: one refused and
// not yet admitted. For the package's external tests, which have no other
// way to learn that a refusal has reached its waiter.
func TurnHeld(g *APIGate) bool { return len(g.turn.ch) > 0 }

// "A wait whose end is known to lie beyond the context's deadline or
// Retry.MaxWait is not begun (RoundTrip returns an error wrapping
// ErrWaitTooLong)": a wait at the Gate too. A LimiterGate's refusal names
// its end (RetryAfter); with the window spent for an hour and MaxWait one
// second, the request fails at once (it waited the hour, until cancelled).
func TestAGateWaitBeyondMaxWaitIsNotBegun(t *testing.T) {
	base := roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(strings.NewReader("ok")), Request: r}, nil
	})
	tr := &Transport{Base: base, Gate: NewLocalGate(sluice.FixedWindow(1, time.Hour)), Retry: RetryPolicy{MaxWait: time.Second}}
	req, _ := http.NewRequest("GET", "http://a.example/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	timer := time.AfterFunc(2*time.Second, cancel) // only to end the probe
	defer timer.Stop()
	req, _ = http.NewRequestWithContext(ctx, "GET", "http://a.example/x", nil)
	start := time.Now()
	_, err = tr.RoundTrip(req)
	if !errors.Is(err, ErrWaitTooLong) {
		t.Errorf("second request, the Gate's window spent for an hour, Retry.MaxWait 1s: %v after %v; want ErrWaitTooLong at once",
			err, time.Since(start).Round(time.Millisecond))
	}
}
