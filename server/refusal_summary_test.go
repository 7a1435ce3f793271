package server_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// The lines left out of the refusal log are summed up within a second or
// so, as the docs say, whatever degradation.interval is (here a minute):
// the summary is no degradation sample.
func TestRefusalSummaryComesEverySecond(t *testing.T) {
	var logs realtest.Buffer
	f := newFixtureWith(t, testConfig+"log: {refusals_per_second: 1}\ndegradation: {interval: 1m}\n",
		func(o *server.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	l := serveOn(t, f.srv)
	for range 8 { // 3 admitted, 5 refused: one logged, four left out
		sendRequestLine(t, l.public, "GET /api/items")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "refusals not logged") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary of the refusals left out 5 s after them:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), "count=4") {
		t.Errorf("the summary does not count the four lines left out:\n%s", logs.String())
	}
}
