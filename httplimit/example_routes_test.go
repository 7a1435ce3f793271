package httplimit_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Each route gets a limit of its own: /bulk 1 request a minute, /search 3.
// Each Middleware has its own Scope, so a client that spends /bulk's quota
// still has all of /search's. Handler has the shape of every router's
// middleware, func(http.Handler) http.Handler: with chi, write
// r.With(bulk).Post("/bulk", h).
func Example_perRoute() {
	limiter := sluice.NewLimiter(memory.New())
	perRoute := func(scope string, limit sluice.Limit) func(http.Handler) http.Handler {
		mw, err := httplimit.New(limiter, httplimit.Options{
			Scope: scope,
			Plans: []*httplimit.Plan{{Name: "all", Limits: []sluice.Limit{limit}}},
		})
		if err != nil {
			log.Fatal(err)
		}
		return mw.Handler
	}
	bulk := perRoute("bulk", sluice.PerMinute(1))
	search := perRoute("search", sluice.PerMinute(3))

	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	mux := http.NewServeMux()
	mux.Handle("POST /bulk", bulk(ok))
	mux.Handle("GET /search", search(ok))

	for _, route := range []string{"POST /bulk", "POST /bulk", "GET /search"} {
		var method, path string
		fmt.Sscan(route, &method, &path)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		fmt.Println(route, w.Code)
	}
	// Output:
	// POST /bulk 200
	// POST /bulk 429
	// GET /search 200
}

// Requests may cost more than one unit: here a search costs 2 of the 10
// units a client has each hour, so the 6th search is refused, and the
// problem body counts units.
func Example_costs() {
	limiter := sluice.NewLimiter(memory.New())
	mw, err := httplimit.New(limiter, httplimit.Options{
		Scope: "api",
		Plans: []*httplimit.Plan{{
			Name:   "free",
			Limits: []sluice.Limit{sluice.FixedWindow(10, time.Hour).Named("per-hour")},
			Costs:  map[string]int64{"GET /search": 2},
		}},
	})
	if err != nil {
		log.Fatal(err)
	}
	api := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for i := 1; i <= 6; i++ {
		w := httptest.NewRecorder()
		api.ServeHTTP(w, httptest.NewRequest("GET", "/search", nil))
		if w.Code != http.StatusOK {
			var p httplimit.Problem
			json.Unmarshal(w.Body.Bytes(), &p)
			sentence, _, _ := strings.Cut(p.Detail, " Retry")
			fmt.Println(i, w.Code, sentence)
		}
	}
	// Output:
	// 6 429 Rate limit exceeded: 10 units per hour on the free plan.
}
