package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// TestNotifyOfEnvoyTellsNoShareOfACheckRefusedForWantOfRoom: the
// in-process store holds two states (store.max_keys), both of clients
// that filled their minute and are refused, so a new client's first
// request is refused for want of room, nothing counted
// (envoy.Outcome.NoRoom): the store's room is short, not the client's
// quota. Its Remaining 0 is no share used, and nothing is told of the new
// client, which has used none of its minute.
func TestNotifyOfEnvoyTellsNoShareOfACheckRefusedForWantOfRoom(t *testing.T) {
	hook := &hookReceiver{}
	hooks := httptest.NewServer(hook)
	defer hooks.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(`domain: edge
descriptors:
  - key: client
    rate_limit: {name: per-client, unit: minute, requests_per_unit: 2}
`), 0o644)
	cfgFile := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(cfgFile, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+testAdmin+
		"notify:\n  url: "+hooks.URL+"\n  limits: [per-client]\n"), 0o644)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	full := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0),
		memory.WithShards(1), memory.WithMaxKeys(2))
	t.Cleanup(func() { full.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: full, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, v := range []string{"a", "b"} { // each uses its whole minute
		for i := range 2 {
			if resp, err := shouldRateLimit(conn, rawRequest("edge", [2]string{"client", v})); err != nil ||
				resp.OverallCode != rlsv3.RateLimitResponse_OK {
				t.Fatalf("client %s, request %d: %v %v", v, i, resp.GetOverallCode(), err)
			}
		}
	}
	hook.waitFor(t, 2) // their 100%
	if resp, err := shouldRateLimit(conn, rawRequest("edge", [2]string{"client", "new"})); err != nil ||
		resp.OverallCode != rlsv3.RateLimitResponse_OVER_LIMIT {
		t.Fatalf("the new client's request: %v %v, want OVER_LIMIT for want of room", resp.GetOverallCode(), err)
	}
	time.Sleep(300 * time.Millisecond) // for a notification, if one were queued
	bodies, _ := hook.waitFor(t, 2)
	for _, b := range bodies {
		var n server.Notification
		if err := json.Unmarshal([]byte(b), &n); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(n.Subject, "=new") {
			t.Errorf("told that the new client, which has used none of its minute, used %d%%: %s", n.At, b)
		}
	}
}
