package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule keyed by a cookie counts every request whose cookie upstreams read
// as different values (given twice with values that differ) under one
// value, "~", shared by every such request of every client, as the value
// fallback: shared gives requests without one is; refusals under it box no
// one, as those under that one do (TestRefusalsUnderASharedFallbackBoxNoOne).
// Browsers send a cookie name twice on their own (one cookie per Path or
// Domain: "session=a; session=b"), so an attacker spending the shared count
// with a decoy pair would otherwise have every such browser boxed, every
// request of its refused on any route. A refusal under "~" beside a value
// of the client's own still counts.
func TestRefusalsUnderTheSharedAmbiguousValueBoxNoOne(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		Rules: []httplimit.Rule{
			{Name: "sessions", Paths: []string{"/api/search"}, Key: []string{"cookie:session"},
				Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
			{Name: "per-address", Paths: []string{"/api/export"}, Key: []string{"ip", "cookie:session"},
				Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	attacker := req{remote: "192.0.2.66:1", header: map[string]string{"Cookie": "session=x; session=y"}}
	victim := req{remote: "192.0.2.1:1", header: map[string]string{"Cookie": "session=v1; session=v2"}}
	if got, want := statuses(mw, attacker, victim, victim, victim), []int{200, 429, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("the attacker spends the shared count of ambiguous cookies, then the victim's browser ×3: %v, want %v", got, want)
	}
	clock.Advance(time.Minute)
	if w := do(mw.Handler(okHandler()), req{path: "/api/other", remote: "192.0.2.1:1"}); w.Code != 200 {
		t.Fatalf("the victim a minute later on another route: %d %s, want 200", w.Code, w.Body.String())
	}
	export := victim
	export.path = "/api/export"
	statuses(mw, export, export, export) // its own address's count, refused twice: boxed
	clock.Advance(time.Minute)
	w := do(mw.Handler(okHandler()), req{path: "/api/other", remote: "192.0.2.1:1"})
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty {
		t.Fatalf("the victim after two refusals under its address and \"~\": %d %s, want boxed", w.Code, w.Body.String())
	}
}
