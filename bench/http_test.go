package bench

import (
	"net/http"
	"runtime"
	"testing"
)

// HTTPKeys is the number of API keys the middleware benchmark spreads its
// requests over.
const HTTPKeys = 10_000

// BenchmarkMiddleware measures one request through each middleware in
// process, without httptest and without a network: one prebuilt GET
// request whose API key header value is replaced before each request
// (walking all HTTPKeys keys; the header map stays in cache, as a request
// just parsed by a server would be), and a reusable ResponseWriter, reset
// between requests. The bare handler is the baseline; a middleware's added
// cost is its ns/op and allocs/op minus the bare handler's. Every request
// also carries TenantHeader: acme, which the rows with rules key a limit
// by (the others never read it). Every key is
// warmed (one request) before the timer starts. non-200/op must be 0:
// every request admitted.
func BenchmarkMiddleware(b *testing.B) {
	keys := APIKeys(HTTPKeys)
	r, err := http.NewRequest(http.MethodGet, "http://api.example/v1/items?page=2", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.RemoteAddr = "192.0.2.10:41234"
	r.Header.Set(APIKeyHeader, keys[0])
	r.Header.Set("Accept", "application/json")
	r.Header.Set(TenantHeader, "acme")
	key := r.Header[http.CanonicalHeaderKey(APIKeyHeader)]
	for _, p := range HTTPPeers {
		b.Run(p.Name, func(b *testing.B) {
			h, closeFn := p.New(keys, BareHandler)
			defer closeFn()
			w := NewDiscardWriter()
			for _, k := range keys {
				w.Reset()
				key[0] = k
				h.ServeHTTP(w, r)
				if w.Status != http.StatusOK {
					b.Fatalf("%s: warm-up request: status %d", p.Name, w.Status)
				}
			}
			runtime.GC()
			walk := NewWalker(0, len(keys))
			bad := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w.Reset()
				key[0] = keys[walk.Next()]
				h.ServeHTTP(w, r)
				if w.Status != http.StatusOK {
					bad++
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(bad)/float64(b.N), "non-200/op")
		})
	}
}
