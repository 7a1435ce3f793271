package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A request the Transport refuses at once — a body larger than a whole
// quota of content bytes (ErrExceedsBurst), a wait for the host's quota
// known to end beyond Retry.MaxWait (ErrWaitTooLong) — is refused before
// the Gate: it neither waits for its turn there nor spends the Gate's
// units, which for a Redis LimiterGate or an APIGate are a fleet's.
func TestRequestsThatCannotGoSpendNothingAtTheGate(t *testing.T) {
	cases := map[string]struct {
		answer func() *http.Response
		body   string
		want   error
	}{
		"body above the whole content-bytes quota": {
			answer: answer(200,
				"RateLimit-Policy", `"upload";q=10;w=60;qu="content-bytes"`,
				"RateLimit", `"upload";r=9;t=60`),
			body: strings.Repeat("x", 100),
			want: client.ErrExceedsBurst,
		},
		"quota spent for half an hour, MaxWait a minute": {
			answer: answer(200, "RateLimit", `"hourly";r=0;t=1800`),
			want:   client.ErrWaitTooLong,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			// A gate whose every unit but the first comes after a second
			// (a paced gate, shared by a fleet): it spends cost units when
			// it lets them go.
			var spent atomic.Int64
			gate := client.GateFunc(func(ctx context.Context, cost int64) error {
				if spent.Load() > 0 {
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
				spent.Add(cost)
				return nil
			})
			base := &script{answers: []func() *http.Response{tc.answer}}
			tr := &client.Transport{Base: base, Gate: gate}
			resp, err := do(t, tr, "PUT", "x")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			start := time.Now()
			_, err = do(t, tr, "PUT", tc.body)
			took := time.Since(start)
			if !errors.Is(err, tc.want) {
				t.Fatalf("second request: %v, want %v", err, tc.want)
			}
			if took > 500*time.Millisecond {
				t.Errorf("the request that could not go failed after %v, waiting for the Gate first; want it to fail at once", took.Round(time.Millisecond))
			}
			if base.attempts() != 1 {
				t.Fatalf("%d attempts", base.attempts())
			}
			if got := spent.Load(); got != 1 {
				t.Errorf("the Gate spent %d units for 1 request sent: the request that could not go (%v) spent at the Gate too", got, tc.want)
			}
		})
	}
}
