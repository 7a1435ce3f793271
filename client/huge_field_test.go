package client_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A hostile or broken server's RateLimit fields of megabytes (within
// net/http's 10 MB bound on a response's header) cost its client little
// to read: every response was parsed whole, about a second of CPU for
// 4 MB, before it could say anything.
func TestAnEnormousRateLimitFieldIsReadCheaply(t *testing.T) {
	var rl, policy strings.Builder
	for i := range 100_000 {
		if i > 0 {
			rl.WriteString(", ")
			policy.WriteString(", ")
		}
		fmt.Fprintf(&rl, `"p%d";r=%d;t=5`, i, 100+i)
		fmt.Fprintf(&policy, `"p%d";q=1000;w=1`, i)
	}
	h := http.Header{}
	h.Set("RateLimit", rl.String())
	h.Set("RateLimit-Policy", policy.String())
	start := time.Now()
	for range 5 {
		client.ParseRateLimit(h, start)
	}
	// About a second a response when parsed whole; the bound leaves room
	// for the race detector on a loaded machine.
	if took := time.Since(start) / 5; took > 300*time.Millisecond {
		t.Errorf("reading %d bytes of RateLimit fields took %v a response; want it bounded", rl.Len()+policy.Len(), took)
	}
}
