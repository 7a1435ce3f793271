package httplimit_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// tokensPlan reserves 40 tokens for a completion and counts what the
// answer's X-Usage-Tokens reports; a rule counts every request, at 1.
const tokensPlan = `
plans:
  p:
    limits:
      - {name: tokens, algorithm: %s, quantity: 100, window: 1m, count: "header:X-Usage-Tokens"}
    costs: {"POST /v1/complete": 40, "GET /v1/usage": 0}
default_plan: p
anonymous_plan: p
rules:
  - name: rpm
    match: {paths: ["/"]}
    cost: 1
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
`

// usageHandler answers with the usage the request asks for: X-Use as the
// header, X-Use-Trailer as an announced trailer, X-Use-Prefixed as an
// unannounced one (http.TrailerPrefix).
func usageHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("X-Use-Trailer"); v != "" {
			w.Header().Set("Trailer", "X-Usage-Tokens")
			w.Write([]byte("streamed"))
			w.Header().Set("X-Usage-Tokens", v)
			return
		}
		if v := r.Header.Get("X-Use-Prefixed"); v != "" {
			w.Write([]byte("streamed"))
			w.Header().Set(http.TrailerPrefix+"X-Usage-Tokens", v)
			return
		}
		if v := r.Header.Get("X-Use"); v != "" {
			w.Header().Set("X-Usage-Tokens", v)
		}
		w.Write([]byte("done"))
	})
}

var tokensItem = regexp.MustCompile(`"tokens";r=(\d+)`)

func TestCountHeaderSettlesEachRequestToWhatItUsed(t *testing.T) {
	for _, alg := range []string{"fixed-window", "sliding-window-counter", "sliding-window-log"} {
		t.Run(alg, func(t *testing.T) {
			h, _ := setupNext(t, fmt.Sprintf(tokensPlan, alg), time.Date(2026, 12, 2, 12, 0, 10, 0, time.UTC), usageHandler())
			left := func(ip string) int64 {
				t.Helper()
				w := do(h, req{path: "/v1/usage", remote: ip})
				m := tokensItem.FindStringSubmatch(w.Header().Get("RateLimit"))
				if m == nil {
					t.Fatalf("no tokens item in %q", w.Header().Get("RateLimit"))
				}
				n, _ := strconv.ParseInt(m[1], 10, 64)
				return n
			}
			complete := func(ip string, header map[string]string) int {
				return do(h, req{method: "POST", path: "/v1/complete", remote: ip, header: header}).Code
			}
			const a = "192.0.2.1:1"
			steps := []struct {
				name   string
				header map[string]string
				left   int64
			}{
				{"a request that used 10 of the 40 it reserved counts 10", map[string]string{"X-Use": "10"}, 90},
				{"another, 0", map[string]string{"X-Use": "0"}, 90},
				{"an answer that reports nothing counts the 40", nil, 50},
				{"a usage that is no whole number counts the 40", map[string]string{"X-Use": "12.5"}, 10},
			}
			for _, s := range steps {
				if code := complete(a, s.header); code != http.StatusOK {
					t.Fatalf("%s: status %d", s.name, code)
				}
				if got := left(a); got != s.left {
					t.Fatalf("%s: %d tokens left, want %d", s.name, got, s.left)
				}
			}
			if code := complete(a, map[string]string{"X-Use": "1"}); code != http.StatusTooManyRequests {
				t.Errorf("10 tokens left, 40 to reserve: status %d, want 429", code)
			}
			const b = "192.0.2.2:1"
			if complete(b, map[string]string{"X-Use": "1000"}); left(b) != 60 {
				t.Errorf("a usage above the reservation counts the reservation: %d left, want 60", left(b))
			}
			if complete(b, map[string]string{"X-Use-Trailer": "5"}); left(b) != 55 {
				t.Errorf("a trailer's usage: %d left, want 55", left(b))
			}
			if complete(b, map[string]string{"X-Use-Prefixed": "7"}); left(b) != 48 {
				t.Errorf("an unannounced trailer's usage: %d left, want 48", left(b))
			}
			// b sent 3 completions and 3 peeks: the rule counting every
			// request at 1 counts 6, and this seventh.
			w := do(h, req{path: "/v1/usage", remote: b})
			if !regexp.MustCompile(`"rpm.per-minute";r=93\b`).MatchString(w.Header().Get("RateLimit")) {
				t.Errorf("the rule counting all: %q, want r=93 after 7 requests", w.Header().Get("RateLimit"))
			}
		})
	}
}

// The header a limit counts is named in any case, as HTTP header names
// are (count: "header:x-usage-tokens", the spelling of gRPC's metadata): the
// usage is read from the answer's header, its announced trailer and its
// unannounced one (http.TrailerPrefix, as a reverse proxy copies an
// upstream's trailers) alike, whichever case the trailer is written in.
func TestCountHeaderIsNamedInAnyCase(t *testing.T) {
	cfg := strings.Replace(fmt.Sprintf(tokensPlan, "fixed-window"), "header:X-Usage-Tokens", "header:x-usage-tokens", 1)
	h, _ := setupNext(t, cfg, time.Date(2026, 12, 2, 12, 0, 10, 0, time.UTC), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("streamed"))
		w.Header()[http.TrailerPrefix+r.Header.Get("X-Trailer-Name")] = []string{"7"}
	}))
	left := int64(100)
	for _, name := range []string{"X-Usage-Tokens", "x-usage-tokens", "X-USAGE-TOKENS"} {
		do(h, req{method: "POST", path: "/v1/complete", remote: "192.0.2.1:1", header: map[string]string{"X-Trailer-Name": name}})
		left -= 7
		w := do(h, req{path: "/v1/usage", remote: "192.0.2.1:1"})
		if m := tokensItem.FindStringSubmatch(w.Header().Get("RateLimit")); m == nil || m[1] != strconv.FormatInt(left, 10) {
			t.Fatalf("a trailer %s%s of 7: RateLimit %q, want %d tokens left", http.TrailerPrefix, name, w.Header().Get("RateLimit"), left)
		}
	}
}

// OnReported sees every answer of a limit that counts what the answer
// reports: the reservation and the usage, or that there was none.
func TestOnReportedSeesEachAnswer(t *testing.T) {
	type seen struct {
		limit      string
		cost, used int64
		reported   bool
	}
	var got []seen
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "p", Limits: []sluice.Limit{sluice.FixedWindow(1000, time.Minute).Named("tokens")},
			Costs: map[string]int64{"POST /v1/complete": 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens"},
		OnReported: func(limit string, cost, used int64, reported bool) {
			got = append(got, seen{limit, cost, used, reported})
		},
	})
	h := mw.Handler(usageHandler())
	for _, use := range []string{"12", "", "x", "70"} {
		do(h, req{method: "POST", path: "/v1/complete", header: map[string]string{"X-Use": use}})
	}
	want := []seen{{"tokens", 40, 12, true}, {"tokens", 40, 0, false}, {"tokens", 40, 0, false}, {"tokens", 40, 70, true}}
	if !slices.Equal(got, want) {
		t.Errorf("OnReported saw %v, want %v", got, want)
	}
}

// A decision kept past its Result (Keep) is settled later by its answer
// (Settle), once: what a decision API needs, which answers before the
// request is served.
func TestKeepAndSettleLater(t *testing.T) {
	mw, _ := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "p", Limits: []sluice.Limit{
			sluice.FixedWindow(100, time.Minute).Named("tokens"),
			sluice.SlidingLog(500, time.Minute).Named("misses"),
			sluice.GCRA(1000, time.Second).Named("rate"),
		}, Costs: map[string]int64{"POST /v1/complete": 40}}},
		Count: map[string]string{"tokens": httplimit.CountHeader + "X-Usage-Tokens", "misses": httplimit.CountStatus + "404"},
	})
	ctx := context.Background()
	who := httplimit.Requester{Subject: "batch-7"}
	res, err := mw.DecideFor(ctx, who, "POST", "/v1/complete", -1)
	if err != nil || !res.Decision.Allowed {
		t.Fatalf("%v %+v", err, res)
	}
	p := mw.Keep(res)
	mw.Discard(res)
	if p == nil {
		t.Fatal("Keep: nil for a request of limits that count by the answer")
	}
	p.Settle(ctx, 200, http.Header{"X-Usage-Tokens": {"10"}})
	p.Settle(ctx, 200, http.Header{"X-Usage-Tokens": {"0"}}) // settled already: nothing more
	left := map[string]int64{}
	peek, err := mw.DecideFor(ctx, who, "POST", "/v1/complete", 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range peek.Checks {
		left[c.Limit.Name()] = peek.Decision.Statuses[i].Remaining
	}
	mw.Discard(peek)
	if left["tokens"] != 90 || left["misses"] != 500 || left["rate"] != 960 {
		t.Errorf("after one completion that used 10 tokens and was answered 200: %v; want tokens 90, misses 500 (a 200 is no miss), rate 960", left)
	}
	plain, err := mw.DecideFor(ctx, httplimit.Requester{Subject: "other"}, "GET", "/v1/models", 0)
	if err != nil {
		t.Fatal(err)
	}
	if mw.Keep(plain) != nil {
		t.Error("Keep of a request that charged nothing: not nil")
	}
	mw.Discard(plain)
}
