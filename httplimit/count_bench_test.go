package httplimit_test

import (
	"net/http"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// BenchmarkHandlerCounted is BenchmarkHandlerHot's api-key/3limits with its
// per-minute limit counting only failures, answered 200: each request is
// recorded, and refunded after its answer (a second store call).
func BenchmarkHandlerCounted(b *testing.B) {
	st := memory.New()
	defer st.Close()
	o := quiet(hotPlan(b, 3))
	o.Count = map[string]string{"per-minute": httplimit.CountFailures}
	mw, err := httplimit.New(sluice.NewLimiter(st), o)
	if err != nil {
		b.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	r, _ := http.NewRequest("GET", "http://api.example/v1/items", nil)
	r.RemoteAddr = "192.0.2.10:41234"
	r.Header.Set("X-API-Key", "the-key")
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
}
