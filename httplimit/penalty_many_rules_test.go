package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A refusal by a rule keyed only by the rule (one quota every client
// spends) does not count toward a client's penalty box, however many rules
// come before it in Options.Rules (64 here, on other plans).
func TestASharedRulesRefusalsBoxNoOneBehindManyRules(t *testing.T) {
	for _, before := range []int{10, 64, 100} {
		var rules []httplimit.Rule
		for i := range before {
			plan := "a"
			if i%2 == 1 {
				plan = "c"
			}
			rules = append(rules, httplimit.Rule{Name: fmt.Sprintf("r%d", i), Plans: []string{plan},
				Limits: []sluice.Limit{sluice.PerMinute(100).Named("x")}})
		}
		rules = append(rules, httplimit.Rule{Name: "shared", Plans: []string{"b"}, Key: []string{"rule"},
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Hour).Named("x")}})
		store := memory.New()
		t.Cleanup(func() { store.Close() })
		plan := func(name string) *httplimit.Plan {
			return &httplimit.Plan{Name: name, Limits: []sluice.Limit{sluice.PerMinute(1000).Named("pm")}}
		}
		mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
			Plans:   []*httplimit.Plan{plan("b"), plan("a"), plan("c")},
			Rules:   rules,
			Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
		})
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		serve := func(addr string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/x", nil)
			r.RemoteAddr = addr + ":1"
			h.ServeHTTP(rec, r)
			return rec
		}
		serve("198.51.100.1") // another client spends the shared quota
		for i := range 4 {
			rec := serve("192.0.2.1")
			if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), httplimit.ProblemQuotaExceeded) {
				t.Errorf("%d rules before the shared one, request %d: %d %s; want 429 quota-exceeded by the shared rule, not the box",
					before, i+1, rec.Code, rec.Body)
				break
			}
		}
	}
}
