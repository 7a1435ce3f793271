package httplimit_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// With the default ErrorHandler, a store that fails every request is
// logged once per interval, not once per request: an outage under load
// must not flood the log. Every request is still served.
func TestUndecidedRequestsAreLoggedOncePerInterval(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("plans: {p: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}]}}\ndefault_plan: p\nanonymous_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	o := cfg.HTTPLimitOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	mw, err := httplimit.New(sluice.NewLimiter(ctxStore{}), o)
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ }))
	status := mw.StatusHandler()
	for range 500 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
		status.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/status", nil))
	}
	if served != 500 {
		t.Errorf("served %d of 500 requests the store could not decide", served)
	}
	if n := strings.Count(logs.String(), "\n"); n != 2 {
		t.Errorf("1,000 failures wrote %d log lines, want 2 (one per message):\n%.2000s", n, logs.String())
	}
}
