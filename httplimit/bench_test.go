package httplimit_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// BenchmarkHandlerHot is one request of a listed API key (api-key), of a
// client with a token verified before (token), or of an anonymous client
// known by its address (ip), through the middleware
// (memory store, a plan of 3 limits, or of its first limit alone, IETF
// headers) with everything in the CPU's caches: the middleware's own work,
// without the memory stalls of bench/'s walk over 10,000 keys. A
// development aid: compare changes here, then confirm them with bench/'s
// BenchmarkMiddleware.
// benchToken is a bearer token of a common length: an RS256 JWT with a few
// claims is 700 to 900 characters.
var benchToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0." + strings.Repeat("eyJzdWIiOiJhbGljZSJ9", 25) + "." + strings.Repeat("c2ln", 86)

func BenchmarkHandlerHot(b *testing.B) {
	for _, limits := range []int{3, 1} {
		cfg := hotPlan(b, limits)
		st := memory.New()
		defer st.Close()
		o := quiet(cfg)
		o.Tokens = &fakeTokens{asked: map[string]int{}, claims: map[string]httplimit.TokenClaims{benchToken: {Subject: "alice"}}}
		mw, err := httplimit.New(sluice.NewLimiter(st), o)
		if err != nil {
			b.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
		for _, bb := range []struct{ name, header, value string }{
			{"api-key", "X-API-Key", "the-key"}, {"token", "Authorization", "Bearer " + benchToken}, {"ip", "", ""}} {
			b.Run(fmt.Sprintf("%s/%dlimits", bb.name, limits), func(b *testing.B) {
				r, _ := http.NewRequest("GET", "http://api.example/v1/items", nil)
				r.RemoteAddr = "192.0.2.10:41234"
				if bb.header != "" {
					r.Header.Set(bb.header, bb.value)
				}
				w := &discard{h: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					clear(w.h)
					w.status = 0
					h.ServeHTTP(w, r)
				}
				if w.status != 200 {
					b.Fatalf("status %d", w.status)
				}
			})
		}
	}
}
