package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestPublicPathsGiveWayToTheUpstream: an API with its own /docs (FastAPI's
// default) or /healthz keeps them behind sluice when docs_path and
// health_path move sluice's elsewhere or hand them over (""): the requests
// then go through the limiter to the upstream like any other.
func TestPublicPathsGiveWayToTheUpstream(t *testing.T) {
	upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("upstream:" + r.URL.Path))
	})
	get := func(t *testing.T, f *fixture, path string) (int, string) {
		t.Helper()
		r := f.do(t, "GET", path, "", nil)
		return r.StatusCode, readAll(t, r)
	}

	f := newFixtureOn(t, "docs_path: /rate-limits/docs\nhealth_path: \"\"\n"+testConfig, upstream)
	for _, path := range []string{"/docs", "/healthz"} {
		if code, body := get(t, f, path); code != http.StatusOK || body != "upstream:"+path {
			t.Errorf("GET %s: %d %q, want the upstream's answer", path, code, body)
		}
	}
	if code, body := get(t, f, "/rate-limits/docs"); code != http.StatusOK || !strings.Contains(body, "<h1") {
		t.Errorf("GET /rate-limits/docs: %d, want sluice's client documentation: %.200s", code, body)
	}
	// Handed to the upstream, /healthz is limited like any other path: the
	// free key's three requests a minute are spent by now.
	r := f.do(t, "GET", "/healthz", "", map[string]string{"X-API-Key": "demo-free-key"})
	for range 3 {
		r = f.do(t, "GET", "/healthz", "", map[string]string{"X-API-Key": "demo-free-key"})
	}
	if r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("the fourth /healthz of a key allowed three: %d, want 429", r.StatusCode)
	}

	// By default sluice answers both itself.
	d := newFixtureOn(t, testConfig, upstream)
	if code, body := get(t, d, "/healthz"); code != http.StatusOK || strings.HasPrefix(body, "upstream:") {
		t.Errorf("default GET /healthz: %d %q, want sluice's", code, body)
	}
	if code, body := get(t, d, "/docs"); code != http.StatusOK || strings.HasPrefix(body, "upstream:") {
		t.Errorf("default GET /docs: %d %.100q, want sluice's", code, body)
	}
}
