package server_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// countConfig limits /login to 2 failed requests a minute per client
// (count: failures) beside a plan of 100 a minute that counts every
// request.
const countConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: sliding-window-log, quantity: 100, window: 1m}
rules:
  - name: logins
    match: {paths: ["/login"]}
    count: failures
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`

// TestCountOnlyFailuresThroughTheProxy: through the reverse proxy, on
// memory and Redis, counting only failures refunds successes exactly: any
// number of logins the upstream answers 200 leave the rule's quota full,
// while the plan counts each; once the upstream fails (502), two failures
// spend the quota and the third login is refused without reaching it.
// /docs says how the rule counts.
func TestCountOnlyFailuresThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, countConfig, kind)
		for i := range 5 {
			r := f.do(t, "POST", "/login", "", nil)
			readAll(t, r)
			// The headers are written before the upstream answers: the
			// request's own unit is still counted then.
			if want := fmt.Sprintf(`"per-minute";r=%d;t=60, "logins.per-minute";r=1;t=60`, 99-i); r.StatusCode != 200 || r.Header.Get("RateLimit") != want {
				t.Fatalf("login %d: %d, RateLimit %q, want 200 and %q", i, r.StatusCode, r.Header.Get("RateLimit"), want)
			}
		}
		if n := f.hits.Load(); n != 5 {
			t.Fatalf("upstream saw %d logins, want 5", n)
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		if err := os.WriteFile(f.file, []byte("upstream: "+dead+"\n"+countConfig+testAdmin), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		var got []int
		for range 3 {
			r := f.do(t, "POST", "/login", "", nil)
			readAll(t, r)
			got = append(got, r.StatusCode)
		}
		if want := "[502 502 429]"; fmt.Sprint(got) != want {
			t.Fatalf("logins with the upstream down: %v, want %v", got, want)
		}

		docs := readAll(t, f.do(t, "GET", "/docs", "", nil))
		if want := "<code>logins.per-minute</code> counts only requests answered with an error (status 400 or above)"; !strings.Contains(docs, want) {
			t.Errorf("/docs lacks %q", want)
		}
		f.noStoreErrors(t)
	})
}

// tokensConfig reserves 40 tokens a completion on a limit that counts what
// the upstream's X-Usage-Tokens reports.
const tokensConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: tokens, algorithm: sliding-window-counter, quantity: 100, window: 1m, count: "header:X-Usage-Tokens"}
    costs: {"POST /api/complete": 40, "GET /api/usage": 0}
`

// TestCountUsageTheUpstreamReportsThroughTheProxy: through the reverse
// proxy, on memory and Redis, a completion reserves its cost and is
// settled to the tokens the upstream reports, in a header or in a trailer
// sent after a streamed body; the metrics count the units reported and the
// answers that reported none; /docs says so.
func TestCountUsageTheUpstreamReportsThroughTheProxy(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Use-Trailer"); v != "" {
			w.Header().Set("Trailer", "X-Usage-Tokens")
			w.Write([]byte("data: streamed\n\n"))
			w.(http.Flusher).Flush()
			w.Header().Set("X-Usage-Tokens", v)
			return
		}
		w.Header().Set("X-Usage-Tokens", r.Header.Get("X-Use"))
		w.Write([]byte("done"))
	}))
	t.Cleanup(up.Close)
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, tokensConfig, kind)
		if err := os.WriteFile(f.file, []byte("upstream: "+up.URL+"\n"+tokensConfig+testAdmin), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		for _, h := range []map[string]string{{"X-Use": "10"}, {"X-Use-Trailer": "5"}} {
			r := f.do(t, "POST", "/api/complete", "", h)
			if body := readAll(t, r); r.StatusCode != 200 || body == "" {
				t.Fatalf("%v: %d %q", h, r.StatusCode, body)
			}
		}
		r := f.do(t, "GET", "/api/usage", "", nil)
		readAll(t, r)
		if got, want := r.Header.Get("RateLimit"), `"tokens";r=85;t=`; !strings.HasPrefix(got, want) {
			t.Errorf("after completions that used 10 and 5 of the 40 each reserved: RateLimit %q, want %s…", got, want)
		}
		readAll(t, f.do(t, "POST", "/api/complete", "", nil)) // an answer that reports nothing
		m := scrape(t, f.admin.URL)
		if m[`sluice_reported_units_total{limit="tokens"}`] != 15 || m[`sluice_unreported_answers_total{limit="tokens"}`] != 1 {
			t.Errorf("reported units %v, unreported answers %v; want 15 and 1",
				m[`sluice_reported_units_total{limit="tokens"}`], m[`sluice_unreported_answers_total{limit="tokens"}`])
		}
		docs := readAll(t, f.do(t, "GET", "/docs", "", nil))
		if want := "<code>tokens</code> counts what you used, as the answer&#39;s X-Usage-Tokens header (or trailer) reports"; !strings.Contains(docs, want) {
			t.Errorf("/docs lacks %q", want)
		}
		f.noStoreErrors(t)
	})
}

// /docs tells a client which statuses a limit counts.
func TestDocsTellsAStatusCount(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: misses, algorithm: sliding-window-log, quantity: 20, window: 1m, count: "status:404,410"}
`)
	docs := readAll(t, f.do(t, "GET", "/docs", "", nil))
	if want := "<code>misses</code> counts only requests answered with status 404, 410: any other request&#39;s units come back once it is answered."; !strings.Contains(docs, want) {
		t.Errorf("/docs lacks %q", want)
	}
}

// The reported-usage series of a limit that counts what the upstream
// reports exist, at 0, before any answer, and those of a rule's limit that
// a reload adds do too: a dashboard's rate of them is 0, not nothing.
func TestReportedUsageSeriesExistBeforeAnyAnswer(t *testing.T) {
	f := newFixture(t, tokensConfig, "memory")
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	for _, want := range []string{`sluice_reported_units_total{limit="tokens"} 0`, `sluice_unreported_answers_total{limit="tokens"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, grepLines(metrics, "reported"))
		}
	}
	if err := os.WriteFile(f.file, []byte(tokensConfig+testAdmin+`rules:
  - name: completions
    match: {paths: ["/api/complete"]}
    count: "header:X-Usage-Tokens"
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := f.srv.Reload(); err != nil {
		t.Fatal(err)
	}
	metrics = readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if want := `sluice_unreported_answers_total{limit="completions.per-minute"} 0`; !strings.Contains(metrics, want) {
		t.Errorf("after the reload /metrics lacks %s:\n%s", want, grepLines(metrics, "reported"))
	}
}
