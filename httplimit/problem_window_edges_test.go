package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Pins docs/headers.md's 429 body ("`limit` and `window` are its `q` and
// `w` (`window` absent for concurrency)") and Usage.Window's doc comment
// ("absent for concurrency"): a concurrency limit has no window, so a
// refusal it decides has no "window" member, neither at the top nor in
// currentUsage, rather than "0s".
func TestAConcurrencyRefusalStatesNoWindow(t *testing.T) {
	mem := memory.New()
	t.Cleanup(func() { mem.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(mem), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.NewLimit(sluice.AlgorithmConcurrency, 2, 5*time.Minute).Named("in-flight")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := mw.DecideFor(context.Background(), httplimit.Requester{Subject: "s"}, http.MethodGet, "/", 3)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	if res.Decision.Allowed {
		t.Fatal("cost 3 of a concurrency limit of 2 admitted")
	}
	rec := httptest.NewRecorder()
	mw.Refuse(rec, httptest.NewRequest(http.MethodGet, "/", nil), res)
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if w, ok := body["window"]; ok {
		t.Errorf(`body "window" = %v, want no member (concurrency has no window)`, w)
	}
	if u, ok := body["currentUsage"].(map[string]any); ok {
		if w, ok := u["window"]; ok {
			t.Errorf(`currentUsage "window" = %v, want no member`, w)
		}
	}
	if body["limit"] != float64(2) || body["policy"] != "in-flight" {
		t.Errorf("limit %v, policy %v; want 2, in-flight", body["limit"], body["policy"])
	}
}
