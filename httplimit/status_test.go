package httplimit_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// statusSetup returns the middleware of yamlText on a memory store at a
// fake clock, the limited "ok" handler and the status handler.
func statusSetup(t *testing.T, yamlText string, at time.Time) (limited, status http.Handler, clock *fakeClock) {
	t.Helper()
	cfg, err := config.Parse("status.yaml", []byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	clock = clockAt(at)
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	o := quiet(cfg)
	o.Clock = clock.Now
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	return mw.Handler(okHandler()), mw.StatusHandler(), clock
}

func standing(t *testing.T, h http.Handler, r req) (httplimit.Standing, *httptest.ResponseRecorder) {
	t.Helper()
	r.path = "/rate_limit"
	w := do(h, r)
	var st httplimit.Standing
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	return st, w
}

var statusYAML = fmt.Sprintf(`
identity: {api_key_headers: [X-API-Key]}
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}]
  pro:
    limits:
      - {name: per-second, algorithm: gcra, quantity: 10, window: 1s, burst: 20}
      - {name: per-month, algorithm: fixed-window, quantity: 1000, window: month}
      - {name: secret, algorithm: fixed-window, quantity: 50, window: 1h}
rules:
  - name: everything
    key: [client]
    cost: 5
    limits: [{name: per-hour, algorithm: fixed-window, quantity: 100, window: 1h}]
global: [{name: global, algorithm: fixed-window, quantity: 100000, window: 1s}]
default_plan: pro
anonymous_plan: anonymous
keys:
  - {name: acme, sha256: %x, plan: pro}
  - {name: monitor, sha256: %x, plan: pro}
exempt: {keys: [monitor]}
response: {hide: [secret]}
`, sha256.Sum256([]byte("acme-key")), sha256.Sum256([]byte("monitor-key")))

// A client's standing is what its headers and a refusal say, limit by
// limit (hidden limits left out), and reading it spends nothing: not the
// plan's, not a rule's cost, not the global limit's.
func TestStatusShowsTheStandingAndSpendsNothing(t *testing.T) {
	limited, status, _ := statusSetup(t, statusYAML, time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC))
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "acme-key"}}
	for range 2 {
		if w := do(limited, acme); w.Code != 200 {
			t.Fatalf("request: %d", w.Code)
		}
	}
	var first httplimit.Standing
	for i := range 5 {
		st, w := standing(t, status, acme)
		if i == 0 {
			first = st
			if w.Header().Get("RateLimit") == "" || w.Header().Get("RateLimit-Policy") == "" {
				t.Errorf("no RateLimit headers on the standing: %v", w.Header())
			}
		} else if fmt.Sprint(st) != fmt.Sprint(first) {
			t.Fatalf("reading the standing changed it: %+v, then %+v", first, st)
		}
	}
	want := []httplimit.LimitStanding{
		{Policy: "per-second", Limit: 20, Remaining: 18, Used: 2, Window: "2s", ResetsAt: "2027-01-31T23:00:01Z"},
		{Policy: "per-month", Limit: 1000, Remaining: 998, Used: 2, Window: "month", ResetsAt: "2027-02-01T00:00:00Z"},
		{Policy: "everything.per-hour", Limit: 100, Remaining: 90, Used: 10, Window: "1h", ResetsAt: "2027-02-01T00:00:00Z"},
		{Policy: "global", Limit: 100000, Remaining: 99998, Used: 2, Window: "1s", ResetsAt: "2027-01-31T23:00:01Z"},
	}
	if first.Plan != "pro" || first.Exempt || first.Penalty != nil || fmt.Sprint(first.Limits) != fmt.Sprint(want) {
		t.Fatalf("standing %+v\nwant plan pro, limits %+v", first, want)
	}
	// The next request finds what two requests spent, the readings nothing.
	w := do(limited, acme)
	if got := w.Header().Get("RateLimit"); got != `"per-second";r=17;t=1, "per-month";r=997;t=3600, "everything.per-hour";r=85;t=3600, "global";r=99997;t=1` {
		t.Errorf("after the readings: RateLimit %s", got)
	}
}

// An anonymous client reads its address's standing; an exempt key reads
// that it is exempt; a refused client reads its refusal without a 429.
func TestStatusOfAnonymousExemptAndRefusedClients(t *testing.T) {
	limited, status, _ := statusSetup(t, statusYAML, time.Date(2027, 1, 31, 23, 0, 30, 0, time.UTC))
	anon := req{remote: "192.0.2.9:1"}
	for range 4 {
		do(limited, anon)
	}
	st, _ := standing(t, status, anon)
	if st.Plan != "anonymous" || len(st.Limits) < 1 || st.Limits[0].Policy != "per-minute" || st.Limits[0].Remaining != 0 || st.Limits[0].Used != 3 {
		t.Errorf("an anonymous client refused by its minute: %+v", st)
	}
	if st, w := standing(t, status, req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "monitor-key"}}); !st.Exempt || st.Plan != "" || len(st.Limits) != 0 || w.Header().Get("RateLimit") != "" {
		t.Errorf("an exempt key: %+v %v", st, w.Header())
	}
}

// A client in the penalty box reads how long it stays there.
func TestStatusInThePenaltyBox(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	a := req{remote: "192.0.2.1:1"}
	statuses(mw, a, a, a) // 200, 429, 429: boxed
	clock.Advance(61 * time.Second)
	st, w := standing(t, mw.StatusHandler(), a)
	if st.Penalty == nil || st.Penalty.RetryAfter != 539 || st.Penalty.Until != "2026-11-30T12:10:00Z" || len(st.Limits) != 0 || w.Header().Get("Retry-After") != "" {
		t.Fatalf("boxed: %+v (penalty %+v)", st, st.Penalty)
	}
}

// A store that cannot decide: 503, Retry-After 1, a problem body.
func TestStatusWhenTheStoreIsDown(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte("plans: {p: {limits: [{name: m, algorithm: fixed-window, quantity: 5, window: 1m}]}}\ndefault_plan: p\nanonymous_plan: p\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.HTTPLimitOptions()
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	mw, err := httplimit.New(sluice.NewLimiter(ctxStore{}), o)
	if err != nil {
		t.Fatal(err)
	}
	w := do(mw.StatusHandler(), req{remote: "192.0.2.1:1", path: "/rate_limit"})
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" || w.Header().Get("Content-Type") != "application/problem+json" {
		t.Fatalf("store down: %d %v %s", w.Code, w.Header(), w.Body)
	}
}

// Reads of one's standing are bounded per client (60 a minute): the 11th
// at one instant is refused with 429 and the wait for the next; another
// client reads on, and the quota is untouched.
func TestStatusReadsAreBounded(t *testing.T) {
	limited, status, clock := statusSetup(t, statusYAML, time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC))
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "acme-key"}, path: "/rate_limit"}
	for i := range 10 {
		if w := do(status, acme); w.Code != 200 {
			t.Fatalf("read %d: %d", i+1, w.Code)
		}
	}
	w := do(status, acme)
	if w.Code != 429 || w.Header().Get("Retry-After") != "1" || !strings.Contains(w.Body.String(), `"violated-policies":["status-reads"]`) {
		t.Fatalf("11th read: %d %v %s", w.Code, w.Header(), w.Body)
	}
	if w := do(status, req{remote: "192.0.2.2:1", path: "/rate_limit"}); w.Code != 200 {
		t.Errorf("another client: %d", w.Code)
	}
	clock.Advance(time.Second)
	if w := do(status, acme); w.Code != 200 {
		t.Errorf("a second later: %d", w.Code)
	}
	if w := do(limited, req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "acme-key"}}); w.Header().Get("RateLimit") != `"per-second";r=19;t=1, "per-month";r=999;t=3599, "everything.per-hour";r=95;t=3599, "global";r=99999;t=1` {
		t.Errorf("the quota after 12 reads: %s", w.Header().Get("RateLimit"))
	}
}

// A client refused its reads and then exempt (another request reusing the
// pooled result) reads that it is exempt, not the refusal.
func TestStatusOfAnExemptClientAfterARefusal(t *testing.T) {
	_, status, _ := statusSetup(t, statusYAML, time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC))
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "acme-key"}, path: "/rate_limit"}
	monitor := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "monitor-key"}, path: "/rate_limit"}
	for range 20 {
		do(status, acme)
		if w := do(status, monitor); w.Code != 200 || !strings.Contains(w.Body.String(), `"exempt":true`) {
			t.Fatalf("the exempt key after acme's refused reads: %d %s", w.Code, w.Body)
		}
	}
}

// Reading a standing decides no request: Observer (the metrics' hook) and
// OnExempt are told of the requests, not of the reads.
func TestStatusReadsAreNotObservedAsRequests(t *testing.T) {
	cfg, err := config.Parse("status.yaml", []byte(statusYAML))
	if err != nil {
		t.Fatal(err)
	}
	clock := clockAt(time.Date(2027, 1, 31, 23, 0, 0, 0, time.UTC))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0))
	t.Cleanup(func() { store.Close() })
	var observed, exempted int
	o := quiet(cfg)
	o.Clock = clock.Now
	o.Observer = func(*httplimit.Result, time.Duration, error) { observed++ }
	o.OnExempt = func(*http.Request, string) { exempted++ }
	mw, err := httplimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	limited, status := mw.Handler(okHandler()), mw.StatusHandler()
	acme := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "acme-key"}}
	monitor := req{remote: "192.0.2.1:1", header: map[string]string{"X-API-Key": "monitor-key"}}
	do(limited, acme)
	do(limited, monitor)
	for range 3 {
		standing(t, status, acme)
		standing(t, status, monitor)
	}
	if observed != 1 || exempted != 1 {
		t.Errorf("observed %d decisions and %d exempt requests, want the one request of each", observed, exempted)
	}
}

// The box's Until is when it has lifted, in whole seconds rounded up, as
// every resetsAt: boxed at 12:00:00.3 for 10 minutes, the client is free
// from 12:10:00.3, so not yet at 12:10:00.
func TestStatusPenaltyUntilIsNeverBeforeTheBoxLifts(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	a := req{remote: "192.0.2.1:1"}
	clock.Advance(300 * time.Millisecond)
	statuses(mw, a, a, a) // 200, 429, 429: boxed at 12:00:00.3
	clock.Advance(61*time.Second + 400*time.Millisecond)
	st, _ := standing(t, mw.StatusHandler(), a) // at 12:01:01.7: 538.6 s left
	if st.Penalty == nil || st.Penalty.RetryAfter != 539 || st.Penalty.Until != "2026-11-30T12:10:01Z" {
		t.Fatalf("boxed: %+v (penalty %+v), want retryAfter 539, until 12:10:01", st, st.Penalty)
	}
}
