package httplimit_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A problem's instance is a URI reference (RFC 9457 §3.1.5): the request's
// path as it was escaped, not decoded ("/a%3Fb" is not "/a?b").
func TestAProblemsInstanceIsThePathAsEscaped(t *testing.T) {
	for _, path := range []string{"/a%3Fb", "/a%20b", "/caf%C3%A9", "/plain"} {
		store := memory.New()
		t.Cleanup(func() { store.Close() })
		mw, err := httplimit.New(sluice.NewLimiter(store), httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(1).Named("per-minute")}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		var p httplimit.Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != http.StatusTooManyRequests {
			t.Fatalf("%s: %d %s: %v", path, rec.Code, rec.Body, err)
		}
		if p.Instance != path {
			t.Errorf("%s: instance %q, want the path as escaped", path, p.Instance)
		}
	}
}
