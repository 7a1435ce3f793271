package server_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
)

// A rule matching a header's value ({name: X-Beta, value: "1"}) limits a
// request that sends the value with whitespace around it over HTTP/2: the
// public listener (h2c here, h2 by ALPN over TLS) hands the middleware
// " 1" as sent, and the reverse proxy sends it on over HTTP/1.1, where the
// upstream reads "1" (RFC 9110 §5.5: the whitespace around a field value
// is not part of it) — the very requests the rule was written for.
func TestARuleHeaderMatchHoldsOverHTTP2WhateverTheWhitespace(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Beta"))
		mu.Unlock()
	}))
	t.Cleanup(up.Close)
	srv, _ := loadServer(t, t.TempDir(), "upstream: "+up.URL+`
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
anonymous_plan: anonymous
rules:
  - name: beta
    match: {headers: [{name: X-Beta, value: "1"}]}
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`)
	addrs := serveOn(t, srv)
	client := h2cClient(t)
	var got []int
	for _, v := range []string{"1", "1 ", " 1"} {
		req, _ := http.NewRequest("GET", "http://"+addrs.public+"/api/x", nil)
		req.Header["X-Beta"] = []string{v}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 {
			t.Fatalf("HTTP/%d, want HTTP/2", resp.ProtoMajor)
		}
		got = append(got, resp.StatusCode)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("X-Beta \"1\", \"1 \", \" 1\" over HTTP/2: %v, want %v; the upstream read X-Beta as %q", got, want, seen)
	}
}
