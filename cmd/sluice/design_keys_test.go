package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
	"github.com/sluice-dev/sluice/sim"
)

// TestDesignConfigCountsMadeUpKeysByAddress serves the configuration
// `sluice design` writes for one limit: it lists no API keys, so a key a
// client makes up is no client of its own, and one address sending a new
// X-API-Key or bearer token with every request is limited as that address.
// sluice's identity at its defaults makes every key a client of its own,
// which let such a client past the designed limit with every request.
func TestDesignConfigCountsMadeUpKeysByAddress(t *testing.T) {
	a, err := sim.Design(context.Background(), sim.Requirements{Rate: "1/1m", Precision: "strict", Keys: 10, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("design.yaml", []byte(a.Config))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.Config)
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
				t.Fatalf("the first request was refused\n%s", a.Config)
			}
		}
		if w.Code != want {
			t.Errorf("request %d (%s: %s) from the address of request 0: %d, want %d\n%s", i, hdr[0], hdr[1], w.Code, want, a.Config)
		}
	}
}
