package httplimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// storeDownHandler returns a handler limited to 10 a minute on a store
// that cannot be reached, decided by a failover's policy onError, sending
// the headers of modes.
func storeDownHandler(t *testing.T, onError failover.OnError, modes ...string) http.Handler {
	t.Helper()
	local := memory.New()
	t.Cleanup(func() { local.Close() })
	f, err := failover.New(down{}, local, failover.Options{OnError: onError, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(sluice.NewLimiter(f), httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(10).Named("per-minute")}}},
		Headers: modes,
	})
	if err != nil {
		t.Fatal(err)
	}
	return mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
}

// A refusal because the store cannot be reached (on_store_error: deny)
// says the client's quota is not spent, and nothing is known of it: the
// body has no currentUsage and the headers no RateLimit item (nor the
// draft modes' remaining and reset) of the limits no store decided, whose
// figures are made up (r=0 beside t=0 said both that nothing remains and
// that all of it is back). The policy, configured, and Retry-After, when
// the store is asked again, stay.
func TestStoreDownRefusalTellsNoMadeUpUsage(t *testing.T) {
	for _, modes := range [][]string{{httplimit.ModeIETF}, {httplimit.ModeDraft6}, {httplimit.ModeDraft7}, {httplimit.ModeLegacy}} {
		rec := httptest.NewRecorder()
		storeDownHandler(t, failover.Deny, modes...).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil))
		var p httplimit.Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("%v: %d %s: %v", modes, rec.Code, rec.Body, err)
		}
		if p.CurrentUsage != nil {
			t.Errorf("%v: store down, quota not spent (%q), but currentUsage %+v", modes, p.Detail, *p.CurrentUsage)
		}
		h := rec.Header()
		for _, name := range []string{"RateLimit", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if v := h.Values(name); len(v) > 0 {
				t.Errorf("%v: store down, yet %s: %q", modes, name, v)
			}
		}
		if h.Get("Retry-After") == "" || h.Get("RateLimit-Policy") == "" && modes[0] != httplimit.ModeLegacy {
			t.Errorf("%v: want Retry-After and RateLimit-Policy kept: %v", modes, h)
		}
	}
}

// A request admitted because the store cannot be reached (on_store_error:
// allow) was counted nowhere: its RateLimit headers tell no remaining (the
// failover's made-up burst) and no reset of the limits no store decided.
func TestStoreDownAdmissionTellsNoMadeUpRemaining(t *testing.T) {
	for _, modes := range [][]string{{httplimit.ModeIETF}, {httplimit.ModeDraft6}, {httplimit.ModeLegacy}} {
		rec := httptest.NewRecorder()
		storeDownHandler(t, failover.Allow, modes...).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/items", nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("%v: %d %s", modes, rec.Code, rec.Body)
		}
		for _, name := range []string{"RateLimit", "RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
			if v := rec.Header().Values(name); len(v) > 0 {
				t.Errorf("%v: admitted with the store down, yet %s: %q", modes, name, v)
			}
		}
	}
}
