package frameworks_test

import (
	"crypto/sha256"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/go-chi/chi/v5"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A chi router whose /search route is limited per API key: clients with a
// listed key get their plan's 2 requests a minute, everyone else is
// limited by IP on the anonymous plan. The middleware sets the IETF
// RateLimit headers on every limited answer (r: the requests left; t: the
// seconds until the next one is available, a GCRA of 2 a minute adding one
// every 30 s) and a 429 problem body on a refusal.
func Example_chi() {
	limiter := sluice.NewLimiter(memory.New())
	search, err := httplimit.New(limiter, httplimit.Options{
		Scope: "search",
		Plans: []*httplimit.Plan{
			{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2)}},
			{Name: "anonymous", Limits: []sluice.Limit{sluice.PerMinute(1)}},
		},
		AnonymousPlan: "anonymous",
		Keys:          []httplimit.Key{{Name: "alice", SHA256: sha256.Sum256([]byte("alice-key"))}}, // on the first plan
	})
	if err != nil {
		log.Fatal(err)
	}

	r := chi.NewRouter()
	r.With(search.Handler).Get("/search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "results")
	})
	r.Get("/about", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "unlimited") })

	get := func(path, key string) {
		req := httptest.NewRequest("GET", path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		fmt.Println(path, w.Code, w.Header().Get("RateLimit"))
	}
	get("/search", "alice-key")
	get("/search", "alice-key")
	get("/search", "alice-key")
	get("/search", "") // by IP, on the anonymous plan
	get("/about", "alice-key")
	// Output:
	// /search 200 "per-minute";r=1;t=30
	// /search 200 "per-minute";r=0;t=30
	// /search 429 "per-minute";r=0;t=30
	// /search 200 "per-minute";r=0;t=60
	// /about 200
}
