package httplimit_test

import (
	"crypto/sha256"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Every client may make 2 requests a minute. Clients are known by their
// listed API key (Authorization: Bearer, or X-API-Key), else by their
// address, as is a key not listed; every response carries the RateLimit
// headers, and a refusal is a 429 with a problem body.
func Example() {
	limiter := sluice.NewLimiter(memory.New())
	mw, err := httplimit.New(limiter, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2)}}},
		Keys: []httplimit.Key{
			{Name: "alice", SHA256: sha256.Sum256([]byte("alice"))},
			{Name: "bob", SHA256: sha256.Sum256([]byte("bob"))},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	api := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	for _, key := range []string{"alice", "alice", "alice", "bob"} {
		r := httptest.NewRequest("GET", "/hello", nil)
		r.Header.Set("Authorization", "Bearer "+key)
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		fmt.Printf("%s: %d RateLimit: %s", key, w.Code, w.Header().Get("RateLimit"))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Printf(" Retry-After: %s", ra)
		}
		fmt.Println()
	}
	// Output:
	// alice: 200 RateLimit: "per-minute";r=1;t=30
	// alice: 200 RateLimit: "per-minute";r=0;t=30
	// alice: 429 RateLimit: "per-minute";r=0;t=30 Retry-After: 30
	// bob: 200 RateLimit: "per-minute";r=1;t=30
}
