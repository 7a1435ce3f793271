package httplimit_test

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// RequestHeaders names every request header the middleware reads
// (docs/middleware.md), so that sluice serve's proxy drops their other
// spellings and forward-auth refuses them: a rule keyed by a JSON or form
// field reads the body as its Content-Encoding says, so Content-Encoding
// is one of them, beside Content-Type.
func TestRequestHeadersNameTheContentEncodingABodyKeyReads(t *testing.T) {
	s := memory.New()
	t.Cleanup(func() { s.Close() })
	mw, err := httplimit.New(sluice.NewLimiter(s), httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
			Key: []string{"json:username"}, Fallback: httplimit.FallbackIP,
			Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(`{"username":"target","password":"x"}`))
	zw.Close()
	h := mw.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	send := func(addr, encodingHeader string) int {
		r := httptest.NewRequest("POST", "/login", bytes.NewReader(z.Bytes()))
		r.RemoteAddr = addr + ":1234"
		r.Header.Set("Content-Type", "application/json")
		r.Header[encodingHeader] = []string{"gzip"}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	// The middleware reads Content-Encoding: two gzip'd sign-ins at one
	// account from two addresses share the account's count of 1.
	if got := []int{send("192.0.2.1", "Content-Encoding"), send("192.0.2.2", "Content-Encoding")}; !slices.Equal(got, []int{200, 429}) {
		t.Fatalf("two gzip'd sign-ins at one account, 1 a minute: %v, want [200 429] (the body read as Content-Encoding says)", got)
	}
	if names := mw.RequestHeaders(); !slices.Contains(names, "Content-Encoding") {
		t.Errorf("RequestHeaders() = %q: no Content-Encoding, which the middleware reads to decode the body a json:/form: key reads (docs/middleware.md: it names every request header the middleware reads)", names)
	}
}
