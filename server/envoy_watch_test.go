package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// Envoy rules folders and files are watched as the configuration file
// is: a rules file added to the folder, changed or removed is applied
// without a SIGHUP; a change that does not load is refused and logged, and
// the rules before it keep serving.
func TestEnvoyRulesAreWatched(t *testing.T) {
	dir := t.TempDir()
	folder := filepath.Join(dir, "rules")
	os.Mkdir(folder, 0o755)
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(domain string, n int) string {
		return "domain: " + domain + "\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: " + string(rune('0'+n)) + "}\n"
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 1))
	single := filepath.Join(dir, "single.yaml")
	write(single, rule("s", 1))
	cfgFile := filepath.Join(dir, "sluice.yaml")
	write(cfgFile, "envoy:\n  listen: 127.0.0.1:0\n  rules: [rules, single.yaml]\n  headers: none\n"+testConfig+testAdmin)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	logs := new(lockedBuffer)
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Load: func() (*config.Config, error) { return config.Load(cfgFile) }, WatchFile: cfgFile,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	client := envoyClient(t, srv)
	n := 0
	// limitOf returns the requests_per_unit that domain's rule has now
	// (0: no rule), asking with a value of its own each time.
	limitOf := func(domain string) uint32 {
		t.Helper()
		n++
		resp, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: domain,
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: strings.Repeat("v", n)}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.Statuses[0].GetCurrentLimit().GetRequestsPerUnit()
	}
	eventually := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not applied within 10s; log:\n%s", what, logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if limitOf("a") != 1 || limitOf("s") != 1 || limitOf("b") != 0 {
		t.Fatal("the rules at start are not served")
	}
	write(filepath.Join(folder, "b.yml"), rule("b", 2))
	eventually("a file added to the folder", func() bool { return limitOf("b") == 2 })
	write(filepath.Join(folder, "a.yaml"), rule("a", 3))
	eventually("a file of the folder changed", func() bool { return limitOf("a") == 3 })
	write(single, rule("s", 4))
	eventually("a rules file changed", func() bool { return limitOf("s") == 4 })
	os.Remove(filepath.Join(folder, "b.yml"))
	eventually("a file removed from the folder", func() bool { return limitOf("b") == 0 })

	// An invalid change is refused, with its place, and the rules keep serving.
	write(filepath.Join(folder, "a.yaml"), "domain: a\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight, requests_per_unit: 5}\n")
	eventually("the refusal of an invalid change", func() bool {
		return strings.Contains(logs.String(), "configuration refused") && strings.Contains(logs.String(), "a.yaml:4:")
	})
	if limitOf("a") != 3 {
		t.Error("after an invalid change, the rules before it do not serve")
	}
	// A file whose name starts with "." beside them, which is not read,
	// changes nothing. (First let a
	// reload settle that the invalid write may still have coming: one
	// written within watchSlack of the refused reload's start is read
	// again.)
	time.Sleep(300 * time.Millisecond)
	reloads := strings.Count(logs.String(), "reloading")
	write(filepath.Join(folder, ".notes.txt"), "not rules")
	time.Sleep(300 * time.Millisecond)
	if got := strings.Count(logs.String(), "reloading"); got != reloads {
		t.Errorf("a dotfile in the folder caused %d reloads", got-reloads)
	}
	write(filepath.Join(folder, "a.yaml"), rule("a", 5))
	eventually("a valid change after a refused one", func() bool { return limitOf("a") == 5 })
}
