package deploy_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/internal/testpki"
)

// TestPrometheusEvaluatesRulesAndDashboard runs a real Prometheus, set up
// by deploy/prometheus/prometheus.yml (scraping every second with the
// Prometheus token) with the rules of sluice-rules.yaml, scraping the
// image's binary serving examples/sluice.yaml on a real Redis under load
// from clients of every plan. Every recorded series, every series an alert
// compares with its threshold, and every query of the Grafana dashboard
// must evaluate to at least one series, and every rule must evaluate
// without error. Every series, label and label value any expression of the
// rules or query of the dashboard names must be one Prometheus holds, and
// every label a legend or an alert's annotation shows one its query gives
// (checkNamesAndLabels).
func TestPrometheusEvaluatesRulesAndDashboard(t *testing.T) {
	t.Parallel()
	img := theImage(t)
	redis := redistest.Standalone(t)
	sum := sha256.Sum256([]byte(exampleToken))
	cfg := realtest.Replace(t, "examples/sluice.yaml", readFile(t, "../examples/sluice.yaml"),
		"  type: memory            # memory | redis",
		`  type: redis`+"\n"+`  redis: {addresses: ["`+redis.Addr+`"], on_store_error: local, instances: 1, lease: auto}`,
		"  loopback_scopes: [read, check, override_plan, admin]",
		"  loopback_scopes: []\n  callers: [{name: prometheus, token_sha256: "+hex.EncodeToString(sum[:])+", scopes: [read]}]",
		// An issuer of JSON Web Tokens whose keys are fetched, for the
		// series of sluice_jwks_fetches_total, which name its entry.
		"  unknown_keys: ip ", "  jwt: {name: users, jwks_url: \""+jwksServer(t)+"\"}\n  unknown_keys: ip ")
	// A limit counted by what the upstream reports, for the reported-usage
	// panel (the demo upstream reports nothing: every answer is unreported).
	// An upstream over mutual TLS, for the series of
	// sluice_tls_certificate_expiry_timestamp_seconds.
	cfg += tlsUpstream(t)
	cfg += `
rules:
  - name: search
    match: {paths: ["/api/search"]}
    count: "header:X-Usage-Units"
    limits: [{name: units, algorithm: fixed-window, quantity: 1000000, window: 1m, lease: off}]
`
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	serveWith(t, public, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)
	// A caller without a token, refused: sluice_caller_refusals_total has
	// its first series.
	if code, _, _ := get(t, "http://"+admin+"/metrics", ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without a token answered %d, want 401", code)
	}

	rulesPath, err := filepath.Abs(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	promAddr := realtest.FreeAddr(t)
	realtest.Prometheus(t, promAddr, prometheusConfig(t, rulesPath, writeFile(t, "token", exampleToken), admin))

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); load(ctx, "http://"+public+"/api/search") }()
	defer func() { cancel(); wg.Wait() }()

	queries := map[string]string{} // query → what it is
	for _, r := range readRules(t) {
		if r.Record != "" {
			queries[r.Record] = "recorded series"
		} else {
			queries[alertSeries(t, r)] = "the series alert " + r.Alert + " compares"
		}
	}
	for _, q := range dashboardQueries(t, "sluice") {
		queries[q] = "a dashboard query"
	}

	prom := "http://" + promAddr
	deadline := time.Now().Add(time.Minute)
	for {
		var empty []string
		for q, what := range queries {
			n, err := promQuery(prom, q)
			if err != nil {
				t.Fatalf("%s %q: %v", what, q, err)
			}
			if n == 0 {
				empty = append(empty, fmt.Sprintf("%s: %s", what, q))
			}
		}
		if len(empty) == 0 {
			break
		}
		if time.Now().After(deadline) {
			sort.Strings(empty)
			t.Fatalf("after a minute of load, these evaluate to no series:\n%s", strings.Join(empty, "\n"))
		}
		time.Sleep(time.Second)
	}
	if bad := unhealthyRules(t, prom); len(bad) > 0 {
		t.Errorf("rules that did not evaluate cleanly:\n%s", strings.Join(bad, "\n"))
	}
	checkNamesAndLabels(t, prom)
}

// prometheusConfig is deploy/prometheus/prometheus.yml with its rule file
// at rules, its token file at token, its target at target, and scrapes and
// rules every second.
func prometheusConfig(t *testing.T, rules, token, target string) string {
	t.Helper()
	return prometheusConfigOf(t, readFile(t, "prometheus/prometheus.yml"), rules, token, target)
}

// prometheusConfigOf is prometheusConfig of text, a version of
// deploy/prometheus/prometheus.yml.
func prometheusConfigOf(t *testing.T, text, rules, token, target string) string {
	t.Helper()
	const name = "prometheus/prometheus.yml"
	var c map[string]any
	if err := yaml.Unmarshal([]byte(text), &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	global, _ := c["global"].(map[string]any)
	scrapes, _ := c["scrape_configs"].([]any)
	if global == nil || len(scrapes) != 1 {
		t.Fatalf("%s: want a global section and one scrape config", name)
	}
	global["scrape_interval"], global["evaluation_interval"] = "1s", "1s"
	c["rule_files"] = []string{rules}
	scrape, _ := scrapes[0].(map[string]any)
	auth, _ := scrape["authorization"].(map[string]any)
	statics, _ := scrape["static_configs"].([]any)
	if scrape["job_name"] != "sluice" || auth == nil || auth["credentials_file"] == nil || len(statics) != 1 {
		t.Fatalf("%s: want job sluice with authorization.credentials_file and one static config", name)
	}
	auth["credentials_file"] = token
	statics[0].(map[string]any)["targets"] = []string{target}
	out, err := yaml.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// load sends GET url until ctx is done, about 400 a second, as clients of
// every plan of examples/sluice.yaml: enterprise often enough to pass its
// shadow limit of 1,000 an hour, free and anonymous clients beyond their
// limits.
func load(ctx context.Context, url string) {
	keys := []string{"demo-enterprise-key", "demo-free-key", "demo-enterprise-key", "demo-pro-key", "demo-enterprise-key", ""}
	c := &http.Client{Timeout: 5 * time.Second}
	tick := time.NewTicker(2500 * time.Microsecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if k := keys[i%len(keys)]; k != "" {
			req.Header.Set("Authorization", "Bearer "+k)
		}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// promQuery evaluates query now and returns the number of series it gave.
func promQuery(prom, query string) (int, error) {
	resp, err := http.Get(prom + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status, Error string
		Data          struct {
			ResultType string
			Result     json.RawMessage
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, fmt.Errorf("decoding the answer (%s): %w", resp.Status, err)
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", resp.Status, r.Error)
	}
	if r.Data.ResultType != "vector" {
		return 0, fmt.Errorf("result type %s, want vector", r.Data.ResultType)
	}
	var series []json.RawMessage
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return 0, err
	}
	return len(series), nil
}

// unhealthyRules returns the rules Prometheus reports an evaluation error
// for, or has not evaluated.
func unhealthyRules(t *testing.T, prom string) []string {
	t.Helper()
	resp, err := http.Get(prom + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health, LastError string }
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var bad []string
	n := 0
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			n++
			if rule.Health != "ok" {
				bad = append(bad, fmt.Sprintf("%s: %s %s", rule.Name, rule.Health, rule.LastError))
			}
		}
	}
	if want := len(readRules(t)); n != want {
		bad = append(bad, fmt.Sprintf("Prometheus loaded %d rules, %s has %d", n, rulesFile, want))
	}
	return bad
}

// jwksServer serves a JWK Set of one key until the test ends, and returns
// its URL.
func jwksServer(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(set)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/jwks.json"
}

// tlsUpstream serves, until the test ends, an upstream over TLS that asks
// for a client certificate, and returns the configuration's upstream and
// upstream_tls for it.
func tlsUpstream(t *testing.T) string {
	t.Helper()
	ca := testpki.New(t, "upstream CA")
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("upstream"))
	}))
	up.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Server(t, "upstream")}, ClientCAs: ca.Pool,
		ClientAuth: tls.VerifyClientCertIfGiven, MinVersion: tls.VersionTLS12}
	up.StartTLS()
	t.Cleanup(up.Close)
	ca.Client(t, "sluice")
	return "upstream: " + up.URL + "\nupstream_tls: {ca_file: " + ca.File("ca") + ", cert_file: " + ca.File("sluice") + ", key_file: " + ca.KeyFile("sluice") + "}\n"
}
