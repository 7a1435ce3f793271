package httplimit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A request that costs more than a concurrency limit's quantity (3 slots
// of 2) is refused with no wait that helps: Result.RetryAfter is
// sluice.Never, and the refusal has no Retry-After and no retryAfter and
// says it can never be admitted, where a request that fits the limit is
// told to poll every second.
func TestCostAboveAConcurrencyLimitIsToldNoWait(t *testing.T) {
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
	if res.Decision.Allowed || res.RetryAfter() != sluice.Never {
		t.Fatalf("cost 3 of a concurrency limit of 2: allowed %v, RetryAfter %v; want refused, sluice.Never",
			res.Decision.Allowed, res.RetryAfter())
	}
	rec := httptest.NewRecorder()
	mw.Refuse(rec, httptest.NewRequest(http.MethodGet, "/", nil), res)
	var p httplimit.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	if rec.Header().Get("Retry-After") != "" || p.RetryAfter != nil || !strings.Contains(p.Detail, "can ever hold") {
		t.Errorf("Retry-After %q, retryAfter %v, detail %q; want none, and a detail saying no wait will do",
			rec.Header().Get("Retry-After"), p.RetryAfter, p.Detail)
	}
}
