package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// A caller token sent over plain http to a host other than this one
// crosses a network anyone on the path reads: keys warns, and says what
// to do. To this host (loopback, localhost) or over https it does not.
func TestKeysWarnsOfATokenSentInClear(t *testing.T) {
	for raw, want := range map[string]bool{
		"http://127.0.0.1:9090":       false,
		"http://127.9.0.1:9090":       false,
		"http://[::1]:9090":           false,
		"http://localhost:9090":       false,
		"http://LocalHost.:9090":      false,
		"https://sluice.internal":     false,
		"http://sluice.internal:9090": true,
		"http://10.0.0.5:9090":        true,
		"http://0.0.0.0:9090":         true,
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := inClear(u); got != want {
			t.Errorf("inClear(%s) = %v, want %v", raw, got, want)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"subject":"name:acme","limits":["per-minute"],"forgot":1}`))
	}))
	defer srv.Close()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"keys", "-admin", srv.URL, "-token", "t", "reset", "name:acme"}, &out, &errOut); code != 0 || strings.Contains(errOut.String(), "clear") {
		t.Errorf("to loopback: exit %d, stderr %q; want 0 and no warning", code, errOut.String())
	}
	// 0.0.0.0 names no host of its own: dialed, it reaches this one, where
	// nothing listens on port 1, so nothing leaves the machine.
	errOut.Reset()
	run(context.Background(), []string{"keys", "-admin", "http://0.0.0.0:1", "-token", "t", "top"}, &out, &errOut)
	if !strings.Contains(errOut.String(), "in clear") || !strings.Contains(errOut.String(), "https://") || strings.Contains(errOut.String(), " t ") {
		t.Errorf("to another host over http: stderr %q; want a warning saying what to do", errOut.String())
	}
}
