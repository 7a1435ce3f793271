package server_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// watchedEnvoy is a server serving the configuration file it was started
// on, watched (WatchFile), with a client of its Envoy service.
type watchedEnvoy struct {
	t      *testing.T
	client rlsv3.RateLimitServiceClient
	logs   *realtest.Buffer
	n      int // the requests made, each with a value of its own
}

// startWatchedEnvoy starts a server on cfgFile, watched, and waits for its
// Envoy service.
func startWatchedEnvoy(t *testing.T, cfgFile string) *watchedEnvoy {
	t.Helper()
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := new(realtest.Buffer)
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Load: func() (*config.Config, error) { return config.Load(cfgFile) }, WatchFile: cfgFile,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	return &watchedEnvoy{t: t, client: envoyClient(t, srv), logs: logs}
}

// limitOf returns the requests_per_unit that domain's rule on key k has
// now (0: no rule), asking with a value of its own each time.
func (w *watchedEnvoy) limitOf(domain string) uint32 {
	w.t.Helper()
	w.n++
	resp, err := w.client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: domain,
		Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: strings.Repeat("v", w.n)}}}}})
	if err != nil {
		w.t.Fatal(err)
	}
	return resp.Statuses[0].GetCurrentLimit().GetRequestsPerUnit()
}

// eventually fails the test, with the server's log, when ok does not hold
// within 10 s; what says what was to be applied.
func (w *watchedEnvoy) eventually(what string, ok func() bool) {
	w.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: not applied within 10s; log:\n%s", what, w.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
