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
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// down is a store that cannot be reached.
type down struct{}

func (down) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return sluice.ErrStoreUnavailable
}

// A request refused because the store cannot be reached (a failover's
// deny policy) is the service's capacity, not the client's quota: a 503
// with Retry-After and the temporary-reduced-capacity problem, saying the
// quota is not spent, where a refusal of the client's quota is a 429.
func TestARefusalByAStoreThatCannotBeReachedIsA503(t *testing.T) {
	local := memory.New()
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(down{}, local, failover.Options{OnError: failover.Deny, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(sluice.NewLimiter(f), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10).Named("per-minute")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil))
	var p httplimit.Problem
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" ||
		p.Type != httplimit.ProblemReducedCapacity || !strings.Contains(p.Detail, "not spent") {
		t.Errorf("refused by a store down under deny: %d, Retry-After %q, %s %q; want 503 with Retry-After, %s, saying the quota is not spent",
			rec.Code, rec.Header().Get("Retry-After"), p.Type, p.Detail, httplimit.ProblemReducedCapacity)
	}

	// The same middleware on a store that answers refuses a spent quota 429.
	quota, err := httplimit.New(sluice.NewLimiter(local), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1).Named("per-minute")}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	h = quota.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/v1/items", nil))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil))
	if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), httplimit.ProblemQuotaExceeded) {
		t.Errorf("a spent quota: %d %s, want 429 quota-exceeded", rec.Code, rec.Body)
	}
}
