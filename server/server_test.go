package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// chromium is the browser the package's browser tests share, each test in
// a tab and BrowserContext of its own.
var chromium realtest.Chromium

func TestMain(m *testing.M) { goleak.VerifyTestMain(closingChromium{m}) }

// closingChromium runs the tests, then ends the browser they shared, before
// goleak looks for goroutines left behind.
type closingChromium struct{ m *testing.M }

func (c closingChromium) Run() int {
	defer chromium.Close()
	return c.m.Run()
}

type fakeClock struct{ us atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return sluice.TimeFromMicros(c.us.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.us.Add(int64(d / time.Microsecond)) }

var noon = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

const testConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
    costs: {"POST /api/generate": 2}
    upgrade: {plan: pro, url: "https://example.com/pricing"}
  pro:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
keys:
  - {name: k1, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free} # demo-free-key
exempt: ["GET /api/health"]
response:
  docs_url: https://example.com/docs
`

type fixture struct {
	srv *server.Server
	// http is the public listener, admin the admin listener.
	http, admin *httptest.Server
	clock       *fakeClock
	file        string
	hits        atomic.Int64 // requests that reached the upstream
	// failover is set on Redis: its counters must show no store error.
	failover *failover.Store
	// mem is the in-process store (the failover's local store on Redis).
	mem *memory.Store
}

// fixtureTimeout bounds a call to the Redis store in the fixtures that
// count fallback decisions as failures.
const fixtureTimeout = 5 * time.Second

// storeKinds are the stores every server test runs on.
var storeKinds = []string{"memory", "redis"}

// eachStore runs test once per store kind.
func eachStore(t *testing.T, test func(t *testing.T, kind string)) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) { test(t, kind) })
	}
}

// newFixture runs a server for cfgText (written to a file, so reloads can be
// tested) in front of a counting upstream, on a memory store or on a real
// Redis (behind the over-limit cache and the failover, as in production),
// both on the same fake clock.
func newFixture(t *testing.T, cfgText string, kind ...string) *fixture {
	t.Helper()
	return newFixtureWith(t, cfgText, nil, kind...)
}

// newFixtureWith is newFixture with the server's options changed by mod
// (when not nil) before the server is built.
func newFixtureWith(t *testing.T, cfgText string, mod func(*server.Options), kind ...string) *fixture {
	t.Helper()
	f := &fixture{}
	return f.start(t, cfgText, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		if o := r.Header.Get("Origin"); o != "" && strings.HasPrefix(r.URL.Path, "/cors/") {
			// A CORS upstream under /cors/: every origin may read it,
			// credentials included.
			w.Header().Set("Access-Control-Allow-Origin", o)
			w.Header().Set("Access-Control-Allow-Credentials", "true")
			w.Header().Set("Access-Control-Expose-Headers", "X-Request-Id")
		}
		w.Write([]byte("upstream:" + r.URL.Path))
	}), mod, kind...)
}

// newFixtureOn is newFixture in front of the upstream handler given (on
// memory; f.hits stays 0).
func newFixtureOn(t *testing.T, cfgText string, upstream http.Handler) *fixture {
	t.Helper()
	return (&fixture{}).start(t, cfgText, upstream, nil)
}

// start runs f's server for cfgText in front of upstream (see newFixture).
func (f *fixture) start(t *testing.T, cfgText string, upstream http.Handler, mod func(*server.Options), kind ...string) *fixture {
	t.Helper()
	f.clock = &fakeClock{}
	f.clock.us.Store(sluice.MicrosSinceEpoch(noon))
	up := httptest.NewServer(upstream)
	t.Cleanup(up.Close)
	f.file = filepath.Join(t.TempDir(), "sluice.yaml")
	if !strings.Contains(cfgText, "\nadmin:") {
		cfgText += testAdmin
	}
	if err := os.WriteFile(f.file, []byte("upstream: "+up.URL+"\n"+cfgText), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(f.file)
	if err != nil {
		t.Fatal(err)
	}
	opts := server.Options{
		Config: cfg, Clock: f.clock.Now,
		Load:   func() (*config.Config, error) { return config.Load(f.file) },
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	local := memory.New(memory.WithClock(f.clock.Now), memory.WithSweepInterval(0))
	opts.Store, opts.Memory, f.mem = local, local, local
	if len(kind) > 0 && kind[0] == "redis" {
		rs := redistest.Standalone(t)
		// Timeouts far above Redis's answers on a loaded machine (the
		// 50 ms defaults are not): only an outage makes fallback
		// decisions, which noStoreErrors counts as a failure.
		primary := redis.New(rs.Client(t), redis.WithTimeout(fixtureTimeout), redis.WithTimeForTesting(f.clock.Now))
		cache := overlimit.New(primary, overlimit.Options{Clock: f.clock.Now})
		fo, err := failover.New(cache, local, failover.Options{Timeout: fixtureTimeout})
		if err != nil {
			t.Fatal(err)
		}
		opts.Store, opts.Failover, opts.OverLimit = fo, fo, cache
		f.failover = fo
	}
	if mod != nil {
		mod(&opts)
	}
	f.srv, err = server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.srv.Close() })
	f.http = httptest.NewServer(f.srv.PublicHandler())
	t.Cleanup(f.http.Close)
	f.admin = httptest.NewServer(f.srv.AdminHandler())
	t.Cleanup(f.admin.Close)
	return f
}

// testAdmin is the admin section newFixture adds to a configuration that
// has none: one caller, holding every scope, whose token is testToken.
const testAdmin = `
admin:
  callers:
    - {name: tests, token_sha256: 4c5dc9b7708905f77f5e5d16316b5dfb425e68cb326dcd55a860e90a7707031e, scopes: [read, check, override_plan, admin]}
`

const testToken = "test-token"

// adminPaths are sluice's endpoints on the admin listener.
var adminPaths = []string{"/v1/", "/metrics", "/dashboard", "/designer", "/readyz"}

// do sends a request as a deployment's clients and operators would: to the
// admin listener with the fixture caller's token (in Sluice-Token, unless
// header sets one; "" sends none) for sluice's private paths, to the public
// listener for every other path.
func (f *fixture) do(t *testing.T, method, path string, body string, header map[string]string) *http.Response {
	t.Helper()
	for _, p := range adminPaths {
		if strings.HasPrefix(path, p) {
			if _, ok := header[server.TokenHeader]; !ok {
				header = maps.Clone(header)
				if header == nil {
					header = map[string]string{}
				}
				header[server.TokenHeader] = testToken
			}
			return f.send(t, f.admin, method, path, body, header)
		}
	}
	return f.send(t, f.http, method, path, body, header)
}

// send sends a request to one listener.
func (f *fixture) send(t *testing.T, to *httptest.Server, method, path string, body string, header map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, to.URL+path, strings.NewReader(body))
	for k, v := range header {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := to.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readAll(t *testing.T, r *http.Response) string {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestProxyForwardsAdmittedAndRefusesTheRest(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		key := map[string]string{"Authorization": "Bearer demo-free-key"}
		for i := range 3 {
			r := f.do(t, "GET", "/api/search", "", key)
			if r.StatusCode != 200 || readAll(t, r) != "upstream:/api/search" {
				t.Fatalf("request %d: %d", i, r.StatusCode)
			}
			if r.Header.Get("RateLimit") == "" {
				t.Error("no RateLimit header on a proxied response")
			}
		}
		r := f.do(t, "GET", "/api/search", "", key)
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "60" {
			t.Fatalf("4th request: %d Retry-After %q", r.StatusCode, r.Header.Get("Retry-After"))
		}
		if f.hits.Load() != 3 {
			t.Errorf("upstream saw %d requests, want 3", f.hits.Load())
		}
		if r := f.do(t, "GET", "/api/health", "", key); r.StatusCode != 200 {
			t.Errorf("exempt route refused: %d", r.StatusCode)
		}
		f.noStoreErrors(t)
	})
}

func TestUpstreamDownIsA502Problem(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + ln.Addr().String()
	ln.Close()
	f := newFixture(t, testConfig)
	os.WriteFile(f.file, []byte("upstream: "+dead+"\n"+testConfig), 0o644)
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	r := f.do(t, "GET", "/x", "", nil)
	body := readAll(t, r)
	if r.StatusCode != 502 || r.Header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, `"status":502`) {
		t.Fatalf("%d %s", r.StatusCode, body)
	}
}

func TestDecisionAPI(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		r := f.do(t, "POST", "/v1/check", `{"api_key":"demo-free-key","method":"POST","path":"/api/generate"}`, nil)
		var got struct {
			Allowed   bool   `json:"allowed"`
			Plan      string `json:"plan"`
			Cost      int64  `json:"cost"`
			Remaining int64  `json:"remaining"`
			Limits    []struct {
				Name      string `json:"name"`
				Remaining int64  `json:"remaining"`
			} `json:"limits"`
			Headers map[string]string `json:"headers"`
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil || r.StatusCode != 200 {
			t.Fatalf("%d %v", r.StatusCode, err)
		}
		if !got.Allowed || got.Plan != "free" || got.Cost != 2 || got.Remaining != 1 || len(got.Limits) != 1 ||
			got.Headers["Ratelimit"] != `"per-minute";r=1;t=60` {
			t.Errorf("decision %+v", got)
		}
		r = f.do(t, "POST", "/v1/check", `{"user":"u1","cost":3}`, nil)
		if body := readAll(t, r); !strings.Contains(body, `"allowed":true`) {
			t.Errorf("user check: %s", body)
		}
		r = f.do(t, "POST", "/v1/check", `{"user":"u1","cost":1}`, nil)
		body := readAll(t, r)
		if !strings.Contains(body, `"allowed":false`) || !strings.Contains(body, `"violated":["per-minute"]`) || !strings.Contains(body, `"retryAfter":60`) {
			t.Errorf("refused check: %s", body)
		}
		f.noStoreErrors(t)
	})
}

func TestDecisionAPIRejectsBadRequests(t *testing.T) {
	f := newFixture(t, testConfig)
	cases := map[string]struct {
		body   string
		status int
		detail string
	}{
		"malformed JSON":         {`{"user":`, 400, "malformed JSON"},
		"unknown field":          {`{"user":"u","colour":"red"}`, 400, `unknown field \"colour\"`},
		"no identity":            {`{"path":"/"}`, 400, "exactly one of"},
		"two identities":         {`{"user":"u","ip":"1.2.3.4"}`, 400, "exactly one of"},
		"key over 1 KiB":         {`{"subject":"` + strings.Repeat("k", 1025) + `"}`, 400, "more than 1024"},
		"negative cost":          {`{"user":"u","cost":-1}`, 400, "cost: -1"},
		"absurd cost":            {`{"user":"u","cost":99999999999999999}`, 400, "cost: 99999999999999999"},
		"bad ip":                 {`{"ip":"999.1.1.1"}`, 400, "not an IP address"},
		"unknown plan":           {`{"user":"u","plan":"gold"}`, 400, `unknown plan \"gold\"`},
		"two values":             {`{"user":"u"} {"user":"v"}`, 400, "more than one value"},
		"wrong type":             {`{"user":5}`, 400, "malformed JSON"},
		"deep nesting":           {strings.Repeat("[", 100000), 400, "malformed JSON"},
		"giant body":             {`{"user":"` + strings.Repeat("x", 70000) + `"}`, 413, "larger than"},
		"relative path":          {`{"user":"u","path":"api"}`, 400, "absolute path"},
		"empty body":             {``, 400, "empty body"},
		"method with a space":    {`{"user":"u","method":"GE T"}`, 400, "not an HTTP method"},
		"host with a space":      {`{"user":"u","host":"a b"}`, 400, "host: want"},
		"host too long":          {`{"user":"u","host":"` + strings.Repeat("h", 256) + `"}`, 400, "host: want"},
		"bad header name":        {`{"user":"u","headers":{"X Tenant":"a"}}`, 400, `\"X Tenant\" is not a header name`},
		"header value newline":   {`{"user":"u","headers":{"X-Tenant":"a\r\nX-Evil: 1"}}`, 400, "X-Tenant: want a header value"},
		"header not a string":    {`{"user":"u","headers":{"X-Tenant":1}}`, 400, "malformed JSON"},
		"33 headers":             {`{"user":"u","headers":{` + manyHeaders(33) + `}}`, 400, "headers: 33, more than 32"},
		"a header twice":         {`{"user":"u","headers":{"x-tenant":"a","X-Tenant":"b"}}`, 400, "headers: X-Tenant is given twice"},
		"32 headers":             {`{"user":"u","headers":{` + manyHeaders(32) + `}}`, 200, ""},
		"non-UTF-8 is no text":   {"{\"user\":\"\xff\xfe\"}", 400, "not text"},
		"cost above every burst": {`{"user":"u","cost":4}`, 200, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := f.do(t, "POST", "/v1/check", c.body, nil)
			body := readAll(t, r)
			if r.StatusCode != c.status || !strings.Contains(body, c.detail) {
				t.Fatalf("%d %s", r.StatusCode, body)
			}
			if c.status >= 400 && r.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("content type %q", r.Header.Get("Content-Type"))
			}
		})
	}
}

// manyHeaders returns n members of a JSON object of headers.
func manyHeaders(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"X-H%d":"v"`, i)
	}
	return b.String()
}

func TestForwardAuth(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		traefik := map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/generate?x=1",
			"X-Forwarded-Host": "api.example.com", "X-Forwarded-For": "198.51.100.7"}
		r := f.do(t, "GET", "/v1/forward-auth", "", traefik)
		if r.StatusCode != 200 || r.Header.Get("RateLimit") != `"per-minute";r=1;t=60` {
			t.Fatalf("first: %d %q", r.StatusCode, r.Header.Get("RateLimit"))
		}
		r = f.do(t, "GET", "/v1/forward-auth", "", traefik)
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "60" || !strings.Contains(readAll(t, r), "violated-policies") {
			t.Fatalf("second: %d", r.StatusCode)
		}
		if f.hits.Load() != 0 {
			t.Error("forward-auth reached the upstream")
		}
		// Another client (per X-Forwarded-For from the trusted proxy) is fresh;
		// nginx's headers are read too.
		nginx := map[string]string{"X-Original-Method": "GET", "X-Original-URI": "/api/search", "X-Forwarded-For": "198.51.100.8"}
		if r := f.do(t, "GET", "/v1/forward-auth", "", nginx); r.StatusCode != 200 {
			t.Errorf("another client: %d", r.StatusCode)
		}
		if r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Uri": "::bad"}); r.StatusCode != 400 {
			t.Errorf("bad URI: %d", r.StatusCode)
		}
		f.noStoreErrors(t)
	})
}

func TestForwardAuthDenyStatusForNginx(t *testing.T) {
	f := newFixture(t, strings.Replace(testConfig, "response:\n", "response:\n  deny_status: 403\n", 1))
	h := map[string]string{"X-Original-URI": "/a", "X-Forwarded-For": "198.51.100.9"}
	for range 3 {
		f.do(t, "GET", "/v1/forward-auth", "", h)
	}
	r := f.do(t, "GET", "/v1/forward-auth", "", h)
	if r.StatusCode != 403 || r.Header.Get("RateLimit") == "" || r.Header.Get("Retry-After") == "" {
		t.Fatalf("%d %v", r.StatusCode, r.Header)
	}
}

func TestAdminEndpoints(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		for range 5 {
			f.do(t, "GET", "/api/x", "", map[string]string{"X-API-Key": "demo-free-key"})
		}
		held := f.mem.Stats().Keys
		if (kind == "memory") != (held > 0) {
			t.Errorf("the in-process store holds %d states on %s", held, kind)
		}
		checks := map[string][]string{
			"/healthz": {"ok"},
			"/readyz":  {"ready"},
			"/metrics": {`sluice_decisions_total{limit="per-minute",policy="free",result="allowed"} 3`,
				`sluice_decisions_total{limit="per-minute",policy="free",result="limited"} 2`,
				"sluice_decision_seconds_bucket", "sluice_near_limit_total 1", "sluice_degradation_level 0",
				fmt.Sprintf("sluice_memory_keys %d\n", held), "sluice_memory_evictions_total 0\n",
				"sluice_memory_expirations_total 0\n", "sluice_memory_clock_late_ticks_total 0\n",
				"sluice_memory_clock_max_lag_seconds 0\n", "sluice_memory_no_room_total 0\n",
				fmt.Sprintf("sluice_memory_limits %d\n", f.mem.Stats().Limits), "sluice_memory_limits_refused_total 0\n",
				`sluice_build_info{goversion="` + runtime.Version() + `",revision="`},
			"/docs":           {`id="plan-table"`, "<strong>free</strong>", "POST /api/generate", "Retry-After", "quota-exceeded", "https://example.com/pricing"},
			"/dashboard":      {`id="rate"`, "dashboard/data"},
			"/dashboard/data": {`"refused":2`, `"limit":"per-minute"`, `"client":"api-key:`},
		}
		for path, wants := range checks {
			body := readAll(t, f.do(t, "GET", path, "", nil))
			for _, w := range wants {
				if !strings.Contains(body, w) {
					t.Errorf("%s lacks %q:\n%.2000s", path, w, body)
				}
			}
			if strings.Contains(body, "demo-free-key") {
				t.Errorf("%s shows a raw API key", path)
			}
		}
		f.noStoreErrors(t)
	})
}

func TestReloadRefusesABadConfigAndKeepsServing(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		up := f.srv.Config().Upstream
		served, err := os.ReadFile(f.file)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(f.file, []byte("upstream: "+up+"\nplans:\n  free:\n    limits:\n      - {name: x, algorithm: nope, quantity: 1, window: 1m}\n"), 0o644)
		err = f.srv.Reload()
		if err == nil || !strings.Contains(err.Error(), f.file+":5:") {
			t.Fatalf("bad reload: %v", err)
		}
		key := map[string]string{"X-API-Key": "demo-free-key"}
		for i := range 3 { // the old limits (3 per minute) still apply
			if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
				t.Fatalf("request %d: %d", i, r.StatusCode)
			}
		}
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 429 {
			t.Fatalf("old limit not enforced: %d", r.StatusCode)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, "\nsluice_config_last_reload_successful 0\n") {
			t.Errorf("after the refusal, /metrics lacks sluice_config_last_reload_successful 0")
		}
		loaded := time.Now()
		os.WriteFile(f.file, []byte(strings.Replace(string(served), "quantity: 3,", "quantity: 10,", 1)), 0o644)
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		if r := f.do(t, "GET", "/a", "", key); r.StatusCode != 200 {
			t.Fatalf("new limit not applied: %d", r.StatusCode)
		}
		metrics = readAll(t, f.do(t, "GET", "/metrics", "", nil))
		var at float64
		for _, line := range strings.Split(metrics, "\n") {
			if v, ok := strings.CutPrefix(line, "sluice_config_last_reload_success_timestamp_seconds "); ok {
				at, _ = strconv.ParseFloat(v, 64)
			}
		}
		if !strings.Contains(metrics, "\nsluice_config_last_reload_successful 1\n") || at < float64(loaded.Unix()) {
			t.Errorf("after the good reload: successful 1 and a timestamp from %d on wanted:\n%s", loaded.Unix(), metrics)
		}
		f.noStoreErrors(t)
	})
}

func TestFileChangeReloadsAndShutdownDrains(t *testing.T) {
	f := newFixture(t, testConfig)
	pub, adm := listenLoopback(t), listenLoopback(t)
	cfg := f.srv.Config()
	slow, arrived := make(chan struct{}), make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-slow
		w.Write([]byte("slow done"))
	}))
	defer up.Close()
	srv, err := server.New(server.Options{Config: cfg, Store: memory.New(memory.WithSweepInterval(0)),
		Load:      func() (*config.Config, error) { return config.Load(f.file) },
		WatchFile: f.file, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, server.Listeners{Public: pub, Admin: adm}) }()
	base := "http://" + pub.Addr().String()

	// Point the upstream at the slow server by editing the file (again
	// until the watcher, started by Serve, has seen a change).
	deadline := time.Now().Add(5 * time.Second)
	for srv.Config().Upstream != up.URL {
		if time.Now().After(deadline) {
			t.Fatal("the file change was not picked up")
		}
		os.WriteFile(f.file, []byte("upstream: "+up.URL+"\n"+testConfig), 0o644)
		time.Sleep(300 * time.Millisecond)
	}
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(base + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	// The request is in flight once the upstream has it: a fixed sleep
	// let a loaded machine cancel before the request was even sent.
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream in 10 s")
	}
	cancel() // SIGTERM-equivalent: stop accepting, drain
	time.Sleep(100 * time.Millisecond)
	close(slow)
	if body := <-got; body != "slow done" {
		t.Errorf("in-flight request: %q", body)
	}
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}

// noStoreErrors fails the test if the Redis store failed during it: every
// decision must have come from Redis, not from the fallback.
func (f *fixture) noStoreErrors(t *testing.T) {
	if f.failover == nil {
		return
	}
	if st := f.failover.Stats(); st.StoreErrors != 0 || st.FallbackDecisions != 0 {
		t.Errorf("the Redis store failed during the test: %+v", st)
	}
}

// TestPublicListenerServesNoPrivateEndpoint: on the public listener every
// sluice path but /docs and /healthz is the upstream's, limited like any
// other; a stranger there cannot decide, spend another client's quota, read
// metrics or pin the degradation level.
func TestPublicListenerServesNoPrivateEndpoint(t *testing.T) {
	f := newFixture(t, testConfig)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/check", `{"user":"victim","cost":3}`},
		{"GET", "/v1/forward-auth", ""},
		{"GET", "/metrics", ""},
		{"GET", "/dashboard", ""},
		{"GET", "/dashboard/data", ""},
		{"GET", "/designer", ""},
		{"POST", "/designer/run", `{"limit":"10/1s","pattern":{"name":"steady"}}`},
		{"POST", "/designer/import", `{"format":"nginx","source":"limit_req_zone $binary_remote_addr zone=a:1m rate=1r/s; limit_req zone=a;"}`},
		{"GET", "/v1/degradation", ""},
		{"PUT", "/v1/degradation", `{"level":"critical"}`},
		{"GET", "/readyz", ""},
	} {
		r := f.send(t, f.http, c.method, c.path, c.body, map[string]string{"X-Forwarded-For": "203.0.113.1"})
		body := readAll(t, r)
		if r.StatusCode == 200 && body != "upstream:"+c.path {
			t.Errorf("%s %s on the public listener answered by sluice: %d %.200s", c.method, c.path, r.StatusCode, body)
		}
		if r.StatusCode != 200 && r.StatusCode != 429 {
			t.Errorf("%s %s on the public listener: %d %.200s", c.method, c.path, r.StatusCode, body)
		}
	}
	if got := f.srv.Degradation().Level; got != 0 {
		t.Errorf("the degradation level moved to %v", got)
	}
	// The victim's quota is whole: 3 of 3 left.
	r := f.do(t, "POST", "/v1/check", `{"user":"victim","cost":3}`, nil)
	if body := readAll(t, r); !strings.Contains(body, `"allowed":true`) {
		t.Errorf("the victim's quota was spent from the public listener: %s", body)
	}
	// On the admin listener sluice's paths stay sluice's.
	for _, path := range []string{"/v1/check", "/designer/run", "/designer/import"} {
		r := f.do(t, "GET", path, "", nil)
		if r.StatusCode != 405 || r.Header.Get("Allow") != "POST" {
			t.Errorf("GET %s on the admin listener: %d", path, r.StatusCode)
		}
	}
}
