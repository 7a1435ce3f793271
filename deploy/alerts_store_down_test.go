package deploy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// TestAlertsFollowARedisOutage runs a real Prometheus with the rules of
// sluice-rules.yaml scraping two of the image's binaries on the
// ConfigMap's configuration (on_store_error: local), sharing a real Redis:
// job sluice decides every check on Redis, job leases with lease: auto.
// While Redis answers, no alert of the store is active. Once Redis is
// killed, each job's SluiceStoreErrors, SluiceFallbackDecisions and
// SluiceStoreBreakerOpen become active (pending: their for: is minutes
// long), and SluiceUndecided does not (the local fallback decides). Once
// Redis is back, the breaker's alert goes. Once an instance is killed, its
// SluiceDown becomes active.
func TestAlertsFollowARedisOutage(t *testing.T) {
	t.Parallel()
	kinds := readManifests(t)
	img := theImage(t)
	redis := redistest.Standalone(t)
	jobs := map[string]string{"sluice": "", "leases": "\n    lease: auto"}
	targets := map[string]*served{}
	for job, extra := range jobs {
		// The store's timeout is raised from the ConfigMap's 50 ms: on a
		// busy test machine (-race, other packages) a call that outlasts it
		// is a real fallback, which the alerts rightly count, and no longer
		// the outage this test makes.
		cfg := realtest.Replace(t, "the ConfigMap's sluice.yaml", kinds["ConfigMap"].Data["sluice.yaml"],
			`addresses: ["redis.default.svc.cluster.local:6379"]`, `addresses: ["`+redis.Addr+`"]`,
			"timeout: 50ms", "timeout: 2s",
			"on_store_error: local", "on_store_error: local"+extra,
			"upstream: http://api.default.svc.cluster.local:8000", "upstream: "+upstreamOK(t))
		public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
		targets[job] = serveWith(t, public, admin, img.command(t, writeFile(t, job+".yaml", cfg), public, admin)...)
	}

	rulesPath, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	token := writeFile(t, "token", exampleToken)
	promAddr := realtest.FreeAddr(t)
	realtest.Prometheus(t, promAddr, prometheusJobs(t, rulesPath, token, map[string]string{
		"sluice": targets["sluice"].admin, "leases": targets["leases"].admin}))
	prom := "http://" + promAddr

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, s := range targets {
		wg.Add(1)
		go func() { defer wg.Done(); trickle(ctx, "http://"+s.public+"/api/items") }()
	}
	defer func() { cancel(); wg.Wait() }()

	storeAlerts := []string{"SluiceStoreErrors", "SluiceFallbackDecisions", "SluiceStoreBreakerOpen"}
	var want []string
	for job := range jobs {
		for _, a := range storeAlerts {
			want = append(want, a+" "+job)
		}
	}
	sort.Strings(want)

	// Redis answering: the fallback ratio is evaluated (0) for each job,
	// and no alert of the store is active.
	waitFor(t, prom, 2*time.Minute, "the fallback ratio of each job evaluated while Redis answers", func(active map[string]string) (bool, string) {
		n, err := promQuery(prom, "job:sluice_fallback_ratio:rate5m == 0")
		return err == nil && n == len(jobs), fmt.Sprintf("%d series of 0 (%v): %s", n, err,
			promValues(t, prom, "job:sluice_fallback_ratio:rate5m or sluice_fallback_decisions_total or sluice_store_errors_total or job:sluice_requests:rate5m"))
	})
	if active := activeAlerts(t, prom); len(storeOrUndecided(active)) > 0 {
		t.Fatalf("while Redis answers, active alerts: %v", active)
	}

	redis.Kill()
	killed := time.Now()
	waitFor(t, prom, time.Minute, "each job's store alerts active once Redis is killed", func(active map[string]string) (bool, string) {
		var got []string
		for a := range active {
			if slices.Contains(storeAlerts, strings.Fields(a)[0]) {
				got = append(got, a)
			}
		}
		sort.Strings(got)
		return slices.Equal(got, want), fmt.Sprintf("active %v, want %v", got, want)
	})
	t.Logf("the store alerts of both jobs active %v after Redis was killed", time.Since(killed).Round(time.Second))
	for a := range activeAlerts(t, prom) {
		if strings.HasPrefix(a, "SluiceUndecided ") {
			t.Errorf("with Redis killed and on_store_error local, %s is active: the fallback decides every request", a)
		}
	}

	redis.Restart()
	back := time.Now()
	waitFor(t, prom, time.Minute, "SluiceStoreBreakerOpen gone once Redis is back", func(active map[string]string) (bool, string) {
		for a := range active {
			if strings.HasPrefix(a, "SluiceStoreBreakerOpen ") {
				return false, "still active: " + a
			}
		}
		return true, ""
	})

	t.Logf("SluiceStoreBreakerOpen gone %v after Redis was back", time.Since(back).Round(time.Second))
	// SluiceDown reads the up series of job sluice alone (the scrape job
	// of prometheus.yml).
	if err := targets["sluice"].proc.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, prom, time.Minute, "SluiceDown for the killed instance", func(active map[string]string) (bool, string) {
		_, ok := active["SluiceDown sluice"]
		return ok, fmt.Sprintf("active %v", active)
	})
}

// storeOrUndecided returns the active alerts of the store and SluiceUndecided.
func storeOrUndecided(active map[string]string) []string {
	var out []string
	for a := range active {
		switch strings.Fields(a)[0] {
		case "SluiceStoreErrors", "SluiceFallbackDecisions", "SluiceStoreBreakerOpen", "SluiceUndecided":
			out = append(out, a)
		}
	}
	return out
}

// activeAlerts returns Prometheus's pending and firing alerts, each as
// "alertname job" with its state.
func activeAlerts(t *testing.T, prom string) map[string]string {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/alerts")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string
				State  string
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	active := map[string]string{}
	for _, a := range r.Data.Alerts {
		active[a.Labels["alertname"]+" "+a.Labels["job"]] = a.State
	}
	return active
}

// waitFor polls Prometheus's active alerts until done says so, and fails
// the test with what done last said when within passes first.
func waitFor(t *testing.T, prom string, within time.Duration, what string, done func(active map[string]string) (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		ok, last := done(activeAlerts(t, prom))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s: %s", within, what, last)
		}
		time.Sleep(time.Second)
	}
}

// prometheusJobs is deploy/prometheus/prometheus.yml with its rule file at
// rules and its token file at token, scraping and evaluating every second,
// its scrape config repeated for each job of targets with that job's
// target.
func prometheusJobs(t *testing.T, rules, token string, targets map[string]string) string {
	t.Helper()
	var c map[string]any
	if err := yaml.Unmarshal([]byte(prometheusConfig(t, rules, token, "")), &c); err != nil {
		t.Fatal(err)
	}
	base, err := yaml.Marshal(c["scrape_configs"].([]any)[0])
	if err != nil {
		t.Fatal(err)
	}
	var scrapes []any
	for job, target := range targets {
		var s map[string]any
		if err := yaml.Unmarshal(base, &s); err != nil {
			t.Fatal(err)
		}
		s["job_name"] = job
		s["static_configs"].([]any)[0].(map[string]any)["targets"] = []string{target}
		scrapes = append(scrapes, s)
	}
	c["scrape_configs"] = scrapes
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// upstreamOK serves 200 to every request until the test ends, and returns
// its URL.
func upstreamOK(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// trickle sends GET url about 50 times a second, as a few API keys and
// anonymous clients, until ctx is done.
func trickle(ctx context.Context, url string) {
	c := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		req.Header.Set("X-API-Key", fmt.Sprintf("client-%d", i%7))
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// promValues evaluates query now and returns its series and values as text.
func promValues(t *testing.T, prom, query string) string {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Metric map[string]string
				Value  []any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return err.Error()
	}
	var out []string
	for _, s := range r.Data.Result {
		out = append(out, fmt.Sprintf("%v %v", s.Metric, s.Value[1]))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}
