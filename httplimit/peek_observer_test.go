package httplimit_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Peeks — StatusHandler's reads and DecideFor's checks of cost 0 — spend
// nothing and decide no request: Observer, the hook of metrics that count
// requests, is told of neither them nor their failures; a request of cost
// 1 it is told of.
func TestPeeksAreNotObserved(t *testing.T) {
	for _, down := range []bool{false, true} {
		var store sluice.Store = ctxStore{}
		if !down {
			m := memory.New()
			t.Cleanup(func() { m.Close() })
			store = m
		}
		observed := 0
		mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
			Plans:       []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2).Named("per-minute")}}},
			DefaultPlan: "free",
			Logger:      slog.New(slog.DiscardHandler),
			Observer:    func(*httplimit.Result, time.Duration, error) { observed++ },
		})
		if err != nil {
			t.Fatal(err)
		}
		c := httplimit.Requester{Subject: "acme"}
		mw.StatusHandler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/rate_limit", nil))
		res, err := mw.DecideFor(context.Background(), c, "GET", "/x", 0)
		mw.Discard(res)
		if (err != nil) != down || observed != 0 {
			t.Errorf("store down %v: a standing read and a peek (err %v) observed %d times, want none", down, err, observed)
		}
		res, _ = mw.DecideFor(context.Background(), c, "GET", "/x", 1)
		mw.Discard(res)
		if observed != 1 {
			t.Errorf("store down %v: a check of cost 1 observed %d times, want once", down, observed)
		}
	}
}
