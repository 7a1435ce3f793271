package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/server"
)

// With store.redis.lease: auto, a token bucket of 100 per 100 s admits at
// most its shared burst at once, 75 (it holds back what refills in a
// lease's life, 25 s): its RateLimit-Policy and the decision API's
// limits[].burst state 75. A bucket with lease: off states its own burst.
func TestServeStatesALeasedBucketsSharedBurst(t *testing.T) {
	cfg, opened := openLeasing(t, "plans:\n  free:\n    limits:\n"+
		"      - {name: bucket, algorithm: token-bucket, quantity: 100, window: 100s}\n"+
		"      - {name: own, algorithm: token-bucket, quantity: 1000, window: 100s, lease: off}\n")
	srv, err := server.New(server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready,
		Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/a", nil)
	r.RemoteAddr = "198.51.100.7:1234"
	srv.PublicHandler().ServeHTTP(w, r)
	want := `"bucket";q=75;w=75, "own";q=1000;w=100`
	if got := w.Header().Get("RateLimit-Policy"); w.Code != 200 || got != want {
		t.Errorf("%d, RateLimit-Policy %q, want 200 and %q", w.Code, got, want)
	}
	w = httptest.NewRecorder()
	r = httptest.NewRequest("POST", "/v1/check", strings.NewReader(`{"ip":"198.51.100.8"}`))
	r.Header.Set(server.TokenHeader, testToken)
	srv.AdminHandler().ServeHTTP(w, r)
	var a struct {
		Limits []struct {
			Name  string
			Burst int64
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &a); err != nil || w.Code != 200 {
		t.Fatalf("/v1/check: %d %s (%v)", w.Code, w.Body.String(), err)
	}
	if len(a.Limits) != 2 || a.Limits[0].Burst != 75 || a.Limits[1].Burst != 1000 {
		t.Errorf("/v1/check limits %+v, want bucket's burst 75 and own's 1000", a.Limits)
	}
}

// openLeasing loads a configuration of body (plans, rules…) with an
// upstream that answers every request 200 and a store on a Redis of its
// own that leases (lease: auto), and opens the store, which t closes.
func openLeasing(t *testing.T, body string) (*config.Config, *server.OpenedStore) {
	t.Helper()
	rs := redistest.Standalone(t)
	up := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	text := "upstream: " + up.URL + "\nstore:\n  type: redis\n  redis: {addresses: [\"" + rs.Addr + "\"], timeout: 1s, lease: auto}\n" +
		body + testAdmin
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := server.OpenStore(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { opened.Close() })
	return cfg, opened
}
