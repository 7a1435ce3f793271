package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/memory"
)

// failingPrimary is a primary store (Redis, say) that cannot be reached.
type failingPrimary struct{}

func (failingPrimary) Apply(context.Context, []sluice.Check, []sluice.Status) error {
	return sluice.ErrStoreUnavailable
}

// webhookRecorder records the bodies notify posts.
type webhookRecorder struct {
	mu     sync.Mutex
	bodies []string
	got    chan struct{}
}

func newWebhookRecorder(t *testing.T) (*webhookRecorder, string) {
	t.Helper()
	h := &webhookRecorder{got: make(chan struct{}, 1)}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return h, hs.URL
}

func (h *webhookRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	h.bodies = append(h.bodies, string(b))
	h.mu.Unlock()
	select {
	case h.got <- struct{}{}:
	default:
	}
}

// serverOverFailingPrimary builds a server whose store is a failover over
// a primary that cannot be reached, deciding by onError (with instances
// sharing the quota), and whose notify section tells the crossings of a
// day's quota of 1,000 to a receiver; it returns the server and the
// receiver.
func serverOverFailingPrimary(t *testing.T, onError failover.OnError, instances int) (*Server, *webhookRecorder) {
	t.Helper()
	return serverOverFailingPrimaryLogging(t, onError, instances, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// serverOverFailingPrimaryLogging is serverOverFailingPrimary logging to
// log.
func serverOverFailingPrimaryLogging(t *testing.T, onError failover.OnError, instances int, log *slog.Logger) (*Server, *webhookRecorder) {
	t.Helper()
	hooks, url := newWebhookRecorder(t)
	cfg, err := config.Parse("sluice.yaml", []byte(`
plans:
  free:
    limits:
      - {name: per-day, algorithm: fixed-window, quantity: 1000, window: 24h}
default_plan: free
anonymous_plan: free
admin:
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, admin]}
notify:
  url: `+url+`/hooks
  at: [50, 80, 100]
  limits: [per-day]
`))
	if err != nil {
		t.Fatal(err)
	}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	fo, err := failover.New(failingPrimary{}, local, failover.Options{OnError: onError, Instances: instances})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Store: fo, Failover: fo, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.notify.close(time.Second) })
	return srv, hooks
}

// checkVia asks the decision API of srv for one unit of subject's quota
// and returns the answer's body.
func checkVia(t *testing.T, srv *Server, subject string) string {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/check", strings.NewReader(`{"subject":"`+subject+`","path":"/api/x"}`))
	req.Header.Set(TokenHeader, "test-token")
	rec := httptest.NewRecorder()
	srv.AdminHandler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("POST /v1/check: %d %s", rec.Code, rec.Body.String())
	}
	return rec.Body.String()
}

// crossingsTold returns how many crossings srv's notifier has told (queued
// for the webhook), and the first body the webhook got, waiting a little
// for it when one was told.
func crossingsTold(srv *Server, hooks *webhookRecorder) (int, string) {
	srv.notify.mu.Lock()
	told := len(srv.notify.seen)
	srv.notify.mu.Unlock()
	if told == 0 {
		return 0, ""
	}
	select {
	case <-hooks.got:
	case <-time.After(5 * time.Second):
	}
	hooks.mu.Lock()
	defer hooks.mu.Unlock()
	if len(hooks.bodies) == 0 {
		return told, "(not posted yet)"
	}
	return told, hooks.bodies[0]
}

// notify tells what a client used of its quota, and a status no store
// decided (Unavailable: on_store_error deny while Redis is down, which
// spends nothing of the client's quota and reports Remaining 0) tells
// nothing: one request refused for the service's capacity is no 50%, 80%
// and 100% of the client's day.
func TestNotifyTellsNoQuotaUsedWhileTheStoreIsDownUnderDeny(t *testing.T) {
	srv, hooks := serverOverFailingPrimary(t, failover.Deny, 1)
	body := checkVia(t, srv, "acme")
	if !strings.Contains(body, `"allowed":false`) || !strings.Contains(body, "temporary-reduced-capacity") {
		t.Fatalf("with the store down under deny: %s, want a refusal for capacity", body)
	}
	if told, first := crossingsTold(srv, hooks); told != 0 {
		t.Errorf("one request refused because the store is down (nothing spent) told %d crossings to the webhook, want 0; first posted: %s", told, first)
	}
}

// notify judges no decision of the failover's local fallback: under
// on_store_error local with a quota shared by 4 instances, its Remaining
// is of this instance's share (250 a day), not of the configured 1,000,
// and a client's first request must not read as 751 used and tell 50% —
// which, a crossing being told once per window, would keep the real one
// from being told.
func TestNotifyJudgesNoDecisionOfTheLocalFallbacksShare(t *testing.T) {
	srv, hooks := serverOverFailingPrimary(t, failover.Local, 4)
	body := checkVia(t, srv, "acme")
	if !strings.Contains(body, `"allowed":true`) {
		t.Fatalf("with the store down under local: %s, want admitted by the local share", body)
	}
	if told, first := crossingsTold(srv, hooks); told != 0 {
		t.Errorf("a client's first request (1 unit of a quota of 1000) told %d crossings to the webhook, want 0; first posted: %s", told, first)
	}
}

// The Envoy service's decisions carry their statuses' Unavailable
// (envoy.Outcome), and notify tells nothing of a descriptor no store
// decided: under on_store_error deny, a descriptor refused because the
// store is down is no 100% of its quota, and its real crossing later in
// the window stays to be told.
func TestNotifyOfEnvoyTellsNoQuotaUsedWhileTheStoreIsDownUnderDeny(t *testing.T) {
	hooks, url := newWebhookRecorder(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("domain: api\ndescriptors:\n  - key: api_key\n    rate_limit: {name: per-day, unit: day, requests_per_unit: 1000}\n"), 0o644)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+
		"plans:\n  free: {limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]}\n"+
		"notify:\n  url: "+url+"/hooks\n  at: [50, 100]\n  limits: [per-day]\n"), 0o644)
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	local := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { local.Close() })
	fo, err := failover.New(failingPrimary{}, local, failover.Options{OnError: failover.Deny})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := New(Options{Config: cfg, Store: fo, Failover: fo, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.notify.close(time.Second) })
	resp, err := srv.envoy.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "api",
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "api_key", Value: "k1"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("with the store down under deny: %v, want OVER_LIMIT", resp.OverallCode)
	}
	if told, first := crossingsTold(srv, hooks); told != 0 {
		t.Errorf("one Envoy request refused because the store is down (nothing spent) told %d crossings to the webhook, want 0; first posted: %s", told, first)
	}
}
