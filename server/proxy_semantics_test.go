package server_test

import (
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"testing"
)

// An interim answer (103 Early Hints, RFC 8297) does not end an admitted
// request's answer: the final response still carries its RateLimit headers
// beside the upstream's own, and none of the hints (RFC 9110 §15.2: a 1xx
// does not change the final response's fields).
func TestEarlyHintsKeepTheRateLimitHeaders(t *testing.T) {
	f := newFixtureOn(t, testConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hints" {
			w.Header().Set("Link", "</app.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
		}
		w.Header().Set("X-Upstream", "yes")
		w.Write([]byte("final"))
	}))
	var hints []int
	get := func(path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest("GET", f.http.URL+path, nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, _ textproto.MIMEHeader) error { hints = append(hints, code); return nil },
		}))
		r, err := f.http.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Body.Close() })
		return r
	}
	plain := get("/plain")
	r := get("/hints")
	if len(hints) != 1 || hints[0] != http.StatusEarlyHints {
		t.Fatalf("interim answers %v, want one 103", hints)
	}
	if r.StatusCode != 200 || readAll(t, r) != "final" {
		t.Fatalf("final answer %d", r.StatusCode)
	}
	if got, want := r.Header.Get("RateLimit"), `"per-minute";r=1;t=60`; got != want {
		t.Errorf("RateLimit after a 103: %q, want %q (without a 103: %q)", got, want, plain.Header.Get("RateLimit"))
	}
	if got, want := r.Header.Get("RateLimit-Policy"), plain.Header.Get("RateLimit-Policy"); got != want || got == "" {
		t.Errorf("RateLimit-Policy after a 103: %q, want %q", got, want)
	}
	if r.Header.Get("X-Upstream") != "yes" || r.Header.Get("Link") != "" {
		t.Errorf("final fields: X-Upstream %q, Link %q; want the upstream's final fields only", r.Header.Get("X-Upstream"), r.Header.Get("Link"))
	}
}
