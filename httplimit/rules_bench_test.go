package httplimit_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// BenchmarkRules is one request of a listed API key through a bare handler
// (bare), through the middleware with a plan of 3 limits (plan), and with
// two rules that match it besides (plan+2rules): one keyed by the client,
// one by a header and the route. The rules' cost is the difference between
// the last two; the bound is against bare.
func BenchmarkRules(b *testing.B) {
	cfg := hotPlan(b, 3)
	bare := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) })
	big := []sluice.Limit{sluice.FixedWindow(1_000_000_000, time.Minute)}
	rules := []httplimit.Rule{
		{Name: "writes", Methods: []string{"POST"}, Paths: []string{"/v1/items/{id}"}, Limits: big},
		{Name: "tenants", Paths: []string{"/v1/"}, Key: []string{"header:X-Tenant", "route"}, HeaderFrom: httplimit.HeaderFromAny, Limits: big},
	}
	for _, bb := range []struct {
		name  string
		rules []httplimit.Rule
	}{{"bare", nil}, {"plan", nil}, {"plan+2rules", rules}} {
		b.Run(bb.name, func(b *testing.B) {
			h := http.Handler(bare)
			if bb.name != "bare" {
				st := memory.New()
				defer st.Close()
				o := quiet(cfg)
				o.Rules = bb.rules
				mw, err := httplimit.New(sluice.NewLimiter(st), o)
				if err != nil {
					b.Fatal(err)
				}
				h = mw.Handler(bare)
			}
			r, _ := http.NewRequest("POST", "http://api.example/v1/items/42", nil)
			r.RemoteAddr = "192.0.2.10:41234"
			r.Header.Set("X-API-Key", "the-key")
			r.Header.Set("X-Tenant", "acme")
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
			if bb.rules != nil && len(w.h["Ratelimit-Policy"]) == 0 {
				b.Fatal("no RateLimit-Policy")
			}
		})
	}
}
