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
// 84 ms rounded up, not a second more to wait.
func TestPacerPrefersThePreciseWaitToTheRoundedReset(t *testing.T) {
	p := client.NewPacer("s", 0)
	send, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("RateLimit-Policy", `"free";q=10;w=1`)
	h.Set("RateLimit", `"free";r=0;t=1`)
	send.Done(client.Answer{Refused: true, Header: h, RetryAfter: 84 * time.Millisecond})

	ctx, cancel := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel()
	begin := time.Now()
	send, err = p.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("a call with 600 ms to spare after an 84 ms wait: %v after %v", err, time.Since(begin))
	}
	if waited := time.Since(begin); waited < 84*time.Millisecond {
		t.Errorf("sent after %v, before the server's 84 ms", waited)
	}
	send.Done(client.Answer{Header: http.Header{"Ratelimit": {`"free";r=9;t=1`}, "Ratelimit-Policy": {`"free";q=10;w=1`}}})

	// A wait the rounding cannot explain is the server's word too: a
	// quota spent for 3 s more holds calls past a 84 ms RetryInfo.
	q := client.NewPacer("s", 0)
	send, _ = q.Wait(context.Background(), 1)
	h.Set("RateLimit", `"free";r=0;t=3`)
	send.Done(client.Answer{Refused: true, Header: h, RetryAfter: 84 * time.Millisecond})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 600*time.Millisecond)
	defer cancel2()
	if _, err := q.Wait(ctx2, 1); err == nil {
		t.Error("a call sent within 600 ms of a refusal whose quota is spent for 3 s")
	}
}
