package grpclimit_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/realtest"
)

// With the default OnError, a store that fails every call is logged once
// per interval, not once per call: an outage under load must not flood the
// log. Every call is still served.
func TestUndecidedCallsAreLoggedOncePerInterval(t *testing.T) {
	t.Parallel()
	var logs realtest.Buffer
	s, err := grpclimit.New(sluice.NewLimiter(brokenStore{}), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.PerMinute(1))}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
	if err != nil {
		t.Fatal(err)
	}
	conn := serveWith(t, grpc.ChainUnaryInterceptor(s.UnaryInterceptor()))
	for i := range 100 {
		if _, err := say(context.Background(), conn, methodSay); err != nil {
			t.Fatalf("call %d: %v, want it served", i, err)
		}
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 {
		t.Errorf("100 undecided calls wrote %d log lines, want 1:\n%.2000s", n, logs.String())
	}
}
