package server_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

const degradeConfig = `
plans:
  free:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
degradation:
  interval: 25ms
  min_dwell: 300ms
  retry_after: 2s
  levels:
    elevated: {enter: {in_flight: 4}, leave: {in_flight: 2}}
    high:     {enter: {in_flight: 8}, leave: {in_flight: 5}}
    critical: {enter: {in_flight: 16}, leave: {in_flight: 12}}
  classes:
    expensive: ["POST /api/generate"]
    critical: ["POST /api/pay"]
    health: ["GET /health"]
`

// startDegrading runs a server with degradeConfig in front of an upstream
// that takes 100ms per request.
func startDegrading(t *testing.T) (*server.Server, string) {
	srv, l := startDegradingOn(t)
	return srv, "http://" + l.public
}

// startDegradingOn is startDegrading with both listeners' addresses.
func startDegradingOn(t *testing.T) (*server.Server, listening) {
	t.Helper()
	return startDegradingWith(t, degradeConfig)
}

// startDegradingWith is startDegradingOn with cfg in place of
// degradeConfig.
func startDegradingWith(t *testing.T, degradation string) (*server.Server, listening) {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			time.Sleep(100 * time.Millisecond)
		}
		w.Write([]byte("ok " + r.URL.Path))
	}))
	t.Cleanup(up.Close)
	return serveYAML(t, "upstream: "+up.URL+"\n"+degradation+testAdmin)
}

// serveYAML serves the configuration text (config.Parse) on a memory
// store of its own, closed when the test ends, and returns the server and
// its listeners.
func serveYAML(t *testing.T, text string) (*server.Server, listening) {
	t.Helper()
	cfg, err := config.Parse("d.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return srv, serveOn(t, srv)
}

// pinLevel pins the degradation level through the admin listener admin.
func pinLevel(t *testing.T, admin, level string) {
	t.Helper()
	req, _ := http.NewRequest("PUT", admin+"/v1/degradation", strings.NewReader(`{"level":"`+level+`"}`))
	req.Header.Set(server.TokenHeader, testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("pin %s: %v %v", level, err, resp)
	}
	resp.Body.Close()
}

func status(t *testing.T, method, url string) (int, http.Header) {
	req, _ := http.NewRequest(method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

func TestOverloadRaisesAndLowersTheLevel(t *testing.T) {
	srv, base := startDegrading(t)
	var mu sync.Mutex
	var seen []degrade.Level
	var at []time.Time
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	record := func() {
		l := srv.Degradation().Level
		mu.Lock()
		if len(seen) == 0 || seen[len(seen)-1] != l {
			seen, at = append(seen, l), append(at, time.Now())
		}
		mu.Unlock()
	}
	go func() {
		defer close(watched)
		for {
			select {
			case <-stopWatch:
				record() // the last level, however the ticks fell
				return
			case <-time.After(5 * time.Millisecond):
			}
			record()
		}
	}()
	// Drive the slow upstream past capacity: 24 clients in a loop.
	loadStart := time.Now()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 24 {
		wg.Go(func() {
			for !stop.Load() {
				resp, err := http.Get(base + "/api/search")
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		})
		time.Sleep(15 * time.Millisecond) // ramp up
	}
	deadline := time.Now().Add(5 * time.Second)
	for srv.Degradation().Level != degrade.Critical && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if srv.Degradation().Level == degrade.Critical {
		if code, _ := status(t, "GET", base+"/health"); code != 200 {
			t.Errorf("at level 3 the health endpoint answered %d", code)
		}
		if code, _ := status(t, "GET", base+"/healthz"); code != 200 {
			t.Errorf("at level 3 /healthz answered %d", code)
		}
	}
	stop.Store(true)
	loaded := time.Since(loadStart)
	wg.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for srv.Degradation().Level != degrade.Normal && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(stopWatch)
	<-watched

	mu.Lock()
	defer mu.Unlock()
	peak := 0
	for i, l := range seen {
		if int(l) > peak {
			peak = int(l)
		}
		_ = i
	}
	if peak != 3 {
		t.Fatalf("levels seen %v: never reached critical", seen)
	}
	// Going up passed through 1 and 2 (or jumped) and reached 3; going down
	// after the load stopped is one step at a time, each held ≥ the dwell.
	last := len(seen) - 1
	if seen[last] != degrade.Normal {
		t.Fatalf("levels seen %v: did not return to normal", seen)
	}
	down := []degrade.Level{degrade.Critical, degrade.High, degrade.Elevated, degrade.Normal}
	if last < 3 || !equalLevels(seen[last-3:], down) {
		t.Fatalf("levels seen %v: the descent is not 3→2→1→0", seen)
	}
	for i := last - 2; i <= last; i++ {
		if held := at[i].Sub(at[i-1]); held < 290*time.Millisecond {
			t.Errorf("level %v held %v before stepping down, less than the 300ms dwell", seen[i-1], held)
		}
	}
	// Bounded transitions: 3 up and 3 down, plus, while the load lasts, at
	// most one step down and back up per dwell (a level's own shedding —
	// level 2's stale cache answering the reads — can calm its signals for
	// a whole dwell; the controller never steps down faster than that).
	if n, most := len(seen)-1, 6+2*int(loaded/(300*time.Millisecond)); n > most {
		t.Errorf("levels seen %v: %d transitions in %v of load, want at most %d", seen, n, loaded, most)
	}
	t.Logf("levels seen: %v", seen)
}

func equalLevels(a, b []degrade.Level) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestLevelActions(t *testing.T) {
	srv, l := startDegradingOn(t)
	base, admin := "http://"+l.public, "http://"+l.admin
	pin := func(level string) { pinLevel(t, admin, level) }
	pin("elevated")
	code, h := status(t, "POST", base+"/api/generate")
	if code != 503 || h.Get("Retry-After") != "2" || h.Get("Content-Type") != "application/problem+json" {
		t.Errorf("level 1, expensive: %d %v", code, h)
	}
	if code, h := status(t, "GET", base+"/api/search"); code != 200 || !strings.Contains(h.Get("RateLimit-Policy"), "q=50000") {
		t.Errorf("level 1, cheap: %d, policy %q (want the limit halved)", code, h.Get("RateLimit-Policy"))
	}
	pin("high")
	if code, _ := status(t, "POST", base+"/api/orders"); code != 503 {
		t.Errorf("level 2, a write: %d", code)
	}
	if code, _ := status(t, "POST", base+"/api/pay"); code != 200 {
		t.Errorf("level 2, a critical write: %d", code)
	}
	if code, _ := status(t, "GET", base+"/api/search"); code != 200 {
		t.Errorf("level 2, a read: %d", code)
	}
	pin("critical")
	for url, want := range map[string]int{base + "/api/search": 503, base + "/health": 200, base + "/healthz": 200,
		admin + "/metrics": 200, admin + "/healthz": 200} {
		if code, _ := status(t, "GET", url); code != want {
			t.Errorf("level 3, %s: %d, want %d", url, code, want)
		}
	}
	req, _ := http.NewRequest("DELETE", admin+"/v1/degradation", nil)
	req.Header.Set(server.TokenHeader, testToken)
	resp, _ := http.DefaultClient.Do(req)
	resp.Body.Close()
	if srv.Degradation().Pinned {
		t.Error("still pinned after DELETE")
	}
}

// Pinning a level that nothing acts on is refused (409): without a
// degradation section the level in force is always Normal, and the metric
// says so — also after a reload drops the section while a level is pinned.
func TestPinWithoutADegradationSectionIsAConflict(t *testing.T) {
	f := newFixture(t, testConfig)
	r := f.do(t, "PUT", "/v1/degradation", `{"level":"high"}`, nil)
	if body := readAll(t, r); r.StatusCode != 409 || !strings.Contains(body, "no degradation section") {
		t.Errorf("pin without a section: %d %s, want 409", r.StatusCode, body)
	}
	if got := f.srv.Degradation(); got.Level != degrade.Normal || got.Pinned {
		t.Errorf("after a refused pin: %+v", got)
	}

	// A section, a pin at high, then a reload without the section.
	g := newFixture(t, degradeConfig)
	if r := g.do(t, "PUT", "/v1/degradation", `{"level":"high"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin with a section: %d", r.StatusCode)
	}
	if !strings.Contains(readAll(t, g.do(t, "GET", "/metrics", "", nil)), "sluice_degradation_level 2\n") {
		t.Error("the metric does not say the pinned level")
	}
	os.WriteFile(g.file, []byte("upstream: "+g.srv.Config().Upstream+"\n"+testConfig+testAdmin), 0o644)
	if err := g.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := g.srv.Degradation(); got.Level != degrade.Normal || got.Pinned {
		t.Errorf("after a reload without the section: %+v, want Normal, unpinned", got)
	}
	if body := readAll(t, g.do(t, "GET", "/metrics", "", nil)); !strings.Contains(body, "sluice_degradation_level 0\n") {
		t.Error("the metric does not say Normal after the section went")
	}
}

// Responses sluice makes itself — the 503s of a degraded level, 429s — are
// not the upstream's errors: counting them would hold the level up while
// traffic lasts. An unreachable upstream's 502s are.
func TestOwnRefusalsAreNotUpstreamErrors(t *testing.T) {
	f := newFixture(t, degradeConfig)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"critical"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	for range 20 {
		if r := f.do(t, "GET", "/api/search", "", nil); r.StatusCode != 503 {
			t.Fatalf("at critical: %d, want sluice's 503", r.StatusCode)
		}
	}
	f.srv.SampleNow()
	if got := f.srv.Degradation().Signals.ErrorRate; got != 0 {
		t.Errorf("error rate %v after 20 of sluice's own 503s, want 0", got)
	}
	// The upstream is gone: its 502s count.
	dead := listenLoopback(t)
	deadURL := "http://" + dead.Addr().String()
	dead.Close()
	os.WriteFile(f.file, []byte("upstream: "+deadURL+"\n"+degradeConfig+testAdmin), 0o644)
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	f.do(t, "PUT", "/v1/degradation", `{"level":"normal"}`, nil)
	f.srv.SampleNow() // a fresh window
	for range 5 {
		if r := f.do(t, "GET", "/api/search", "", nil); r.StatusCode != 502 {
			t.Fatalf("upstream down: %d, want 502", r.StatusCode)
		}
	}
	f.srv.SampleNow()
	if got := f.srv.Degradation().Signals.ErrorRate; got != 1 {
		t.Errorf("error rate %v after 5 upstream 502s, want 1", got)
	}
}

// A degraded level scales every limit, but never below the plan's most
// expensive endpoint: a request the configuration admits stays admissible
// at every level (at a lower rate), instead of becoming one that can never
// pass.
func TestReducedLimitsKeepTheLargestCostAdmissible(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
      - {name: per-hour, algorithm: fixed-window, quantity: 1000, window: 1h}
    costs: {"POST /api/big": 10}
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`)
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	r := f.do(t, "POST", "/api/big", "", nil)
	if r.StatusCode != 200 || r.Header.Get("RateLimit-Policy") != `"per-minute";q=10;w=60, "per-hour";q=500;w=3600` {
		t.Errorf("a cost-10 request at elevated: %d %q, want admitted under per-minute 10 (its cost) and per-hour 500", r.StatusCode, r.Header.Get("RateLimit-Policy"))
	}
}

// TestReducedLevelScalesRulesLimits: a degraded level scales a rule's
// limits as it scales a plan's; a rule's own cost stays admissible.
func TestReducedLevelScalesRulesLimits(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
rules:
  - name: search
    match: {paths: ["/api/search"]}
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 40, window: 1m}
  - name: export
    match: {paths: ["/api/export"]}
    cost: 8
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
degradation:
  factor: 0.5
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
`)
	policy := func(path string) string {
		t.Helper()
		r := f.do(t, "GET", path, "", nil)
		if r.StatusCode != 200 {
			t.Fatalf("GET %s: %d", path, r.StatusCode)
		}
		return r.Header.Get("RateLimit-Policy")
	}
	if got, want := policy("/api/search"), `"per-minute";q=100;w=60, "search.per-minute";q=40;w=60`; got != want {
		t.Fatalf("normal level: RateLimit-Policy %q, want %q", got, want)
	}
	if r := f.do(t, "PUT", "/v1/degradation", `{"level":"elevated"}`, nil); r.StatusCode != 200 {
		t.Fatalf("pin: %d", r.StatusCode)
	}
	if got, want := policy("/api/search"), `"per-minute";q=50;w=60, "search.per-minute";q=20;w=60`; got != want {
		t.Errorf("elevated: RateLimit-Policy %q, want %q (the rule's limit halved too)", got, want)
	}
	if got, want := policy("/api/export"), `"per-minute";q=50;w=60, "export.per-minute";q=8;w=60`; got != want {
		t.Errorf("elevated: RateLimit-Policy %q, want %q (halved to 5, kept at the rule's cost 8)", got, want)
	}
}
