package client_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A refusal whose RetryInfo-style wait (Answer.RetryAfter) is finer than
// the RateLimit field's whole seconds holds calls for that wait: t=1 is
// 84 ms rounded up, not a second more to wait; and it is the server's wait
// even when the field's reset says more.
func TestPacerPrefersThePreciseWaitToTheRoundedReset(t *testing.T) {
	p := client.NewPacer("s", 0)
	send, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", `"free";q=10;w=1`)
	h.Set("RateLimit", `"free";r=0;t=1`)
	begin := time.Now() // the refusal's arrival, from which the server's wait counts
	send.Done(client.Answer{Refused: true, Header: h, RetryAfter: 84 * time.Millisecond, At: begin})

	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	send, err = p.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("a call with 600 ms to spare after an 84 ms wait: %v after %v", err, time.Since(begin))
	}
	if waited := time.Since(begin); waited < 84*time.Millisecond {
		t.Errorf("sent after %v, before the server's 84 ms", waited)
	}
	send.Done(client.Answer{Header: http.Header{"Ratelimit": {`"free";r=9;t=1`}, "Ratelimit-Policy": {`"free";q=10;w=1`}}})

	// The server's wait takes precedence over the RateLimit fields, as
	// Retry-After does (draft-ietf-httpapi-ratelimit-headers): a quota
	// stated spent for 3 s more holds calls for the 84 ms RetryInfo says.
	q := client.NewPacer("s", 0)
	send, _ = q.Wait(context.Background(), 1)
	h.Set("RateLimit", `"free";r=0;t=3`)
	send.Done(client.Answer{Refused: true, Header: h, RetryAfter: 84 * time.Millisecond})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel2()
	if _, err := q.Wait(ctx2, 1); err != nil {
		t.Errorf("a call with 600 ms to spare after an 84 ms RetryInfo and a reset of 3 s: %v", err)
	}
}
