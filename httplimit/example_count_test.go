package httplimit_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A quota of tokens a minute, counted as the handler reports them: each
// completion reserves the most it may use (its cost, 1,000) and, once
// answered, is counted at what its X-Usage-Tokens header says. The
// RateLimit header of each response is written before the handler runs, so
// it shows the reservation; the next response shows the settled count.
func Example_countWhatTheAnswerReports() {
	// A clock standing still at the start of a minute, so that the
	// output is the same on every run.
	clock := func() time.Time { return time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC) }
	tokens := sluice.FixedWindow(5000, time.Minute).Named("tokens")
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithClock(clock))), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{tokens},
			Costs: map[string]int64{"POST /v1/completions": 1000}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
		Clock: clock,
	})
	if err != nil {
		log.Fatal(err)
	}
	api := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Usage-Tokens", "120") // what the model reported
		fmt.Fprintln(w, "a completion")
	}))
	for range 3 {
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("POST", "/v1/completions", nil))
		fmt.Println(w.Code, w.Header().Get("RateLimit"))
	}
	// Output:
	// 200 "tokens";r=4000;t=60
	// 200 "tokens";r=3880;t=60
	// 200 "tokens";r=3760;t=60
}
