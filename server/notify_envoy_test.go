package server_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/server"
)

// The Envoy service's decisions notify too: an API key that uses half,
// then all of its month's quota (a rule of the envoy rules, named in
// notify.limits) is told once each, with the descriptor as its subject
// and the month's end; a configuration naming a limit of no rule, plan or
// envoy rule is refused.
func TestNotifyOfEnvoyDecisions(t *testing.T) {
	hook := &hookReceiver{}
	hooks := httptest.NewServer(hook)
	defer hooks.Close()
	const rules = `domain: api
descriptors:
  - key: api_key
    rate_limit: {name: per-month, unit: month, requests_per_unit: 4}
`
	notify := func(limits string) string {
		return "notify:\n  url: " + hooks.URL + "\n  at: [50, 100]\n  limits: [" + limits + "]\n"
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules), 0o644)
	file := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(file, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+notify("per-months")), 0o644)
	if _, err := config.Load(file); err == nil || !strings.Contains(err.Error(), `"per-months" is no limit of a plan, a rule (rule.limit) or global, or of the envoy rules`) {
		t.Fatalf("a limit of nothing: %v", err)
	}
	srv := startEnvoyWith(t, rules, notify("per-month"))
	client := envoyClient(t, srv)
	for i, want := range []rlsv3.RateLimitResponse_Code{1, 1, 1, 1, 2} { // 4 OK, then OVER_LIMIT
		resp, err := client.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "api",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "api_key", Value: "k1"}}}}})
		if err != nil || resp.OverallCode != want {
			t.Fatalf("request %d: %v %v, want %v", i, resp.GetOverallCode(), err, want)
		}
	}
	bodies, _ := hook.waitFor(t, 2)
	for i, at := range []int{50, 100} {
		var n server.Notification
		if err := json.Unmarshal([]byte(bodies[i]), &n); err != nil {
			t.Fatal(err)
		}
		end, err := time.Parse(time.RFC3339, n.ResetsAt)
		if n.At != at || n.Event != "quota.used" || n.Limit != "per-month" || n.Subject != "envoy:api:api_key=k1" || n.Domain != "api" ||
			n.Quota != 4 || n.Used != int64(2+2*i) || n.Window != "30d" || err != nil || end.Unix()%(30*24*3600) != 0 || n.ID == "" {
			t.Errorf("notification %d: %s", i, bodies[i])
		}
	}
	time.Sleep(50 * time.Millisecond)
	if _, n := hook.counts(); n != 2 {
		t.Errorf("%d notifications, want 2: the refusal tells nothing more", n)
	}
}
