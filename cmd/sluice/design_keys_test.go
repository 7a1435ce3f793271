package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
	"github.com/sluice-dev/sluice/sim"
)

// TestDesignConfigCountsMadeUpKeysByAddress serves the configuration
// `sluice design` writes for one limit: it lists no API keys, so a key a
// client makes up is no client of its own, and one address sending a new
// X-API-Key or bearer token with every request is limited as that address
// (unknown_keys: ip, sluice's default, written out).
func TestDesignConfigCountsMadeUpKeysByAddress(t *testing.T) {
	a, err := sim.Design(context.Background(), sim.Requirements{Rate: "1/1m", Precision: "strict", Keys: 10, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	expectMadeUpKeysByAddress(t, a.Config)
}

// TestDesignAPIWithoutKeysCountsMadeUpKeysByAddress: a whole API designed
// without API keys counts every client by its address ("every client is
// anonymous"), so a key or bearer token a client makes up is no client of
// its own, as in the configuration for one limit.
func TestDesignAPIWithoutKeysCountsMadeUpKeysByAddress(t *testing.T) {
	req, err := sim.ReadAPIRequirements(strings.NewReader("name: Small API\nplans:\n  - name: free\n    clients: 100\n    limits: [{rate: 1/1m}]\n"), "api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, err := sim.DesignAPI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	expectMadeUpKeysByAddress(t, a.Config)
}

// expectMadeUpKeysByAddress serves cfg, a configuration of one limit of 1
// a minute, and expects the requests of one address after its first
// refused, whatever API key or bearer token each makes up.
func expectMadeUpKeysByAddress(t *testing.T, cfgText string) {
	t.Helper()
	cfg, err := config.Parse("design.yaml", []byte(cfgText))
	if err != nil {
		t.Fatalf("%v\n%s", err, cfgText)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.PublicHandler()
	for i, hdr := range [][2]string{{"", ""}, {"X-Api-Key", "made-up-1"}, {"X-Api-Key", "made-up-2"}, {"Authorization", "Bearer made-up-3"}} {
		r := httptest.NewRequest("GET", "/x", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		if hdr[0] != "" {
			r.Header.Set(hdr[0], hdr[1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		want := http.StatusTooManyRequests
		if i == 0 {
			want = w.Code // the first is admitted, however the server answers it
			if want == http.StatusTooManyRequests {
				t.Fatalf("the first request was refused\n%s", cfgText)
			}
		}
		if w.Code != want {
			t.Errorf("request %d (%s: %s) from the address of request 0: %d, want %d\n%s", i, hdr[0], hdr[1], w.Code, want, cfgText)
		}
	}
}
