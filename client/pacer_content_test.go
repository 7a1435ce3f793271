package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// A Pacer neither counts nor waits for a quota of content bytes, but a
// refusal under one holds its calls for the server's wait.
func TestAPacerIgnoresQuotasOfContentBytesButNotTheirRefusals(t *testing.T) {
	p := client.NewPacer("s", 0)
	h := http.Header{}
	h.Set("RateLimit-Policy", `"upload";q=100;w=3600;qu="content-bytes"`)
	h.Set("RateLimit", `"upload";r=0;t=3600`)
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		send, err := p.Wait(ctx, 1)
		cancel()
		if err != nil {
			t.Fatalf("call %d, with the quota of content bytes spent: %v", i, err)
		}
		send.Done(client.Answer{Header: h})
	}
	send, err := p.Wait(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	send.Done(client.Answer{Refused: true, Header: h, RetryAfter: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := p.Wait(ctx, 1); !errors.Is(err, client.ErrWaitTooLong) {
		t.Errorf("a call 100 ms after a refusal asking for 1 s: %v; want ErrWaitTooLong", err)
	}
}
