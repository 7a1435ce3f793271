package httplimit_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// TestPenaltyBoxHoldsThenLifts: the second refusal within a minute boxes
// the client for 10 minutes: a request its quota would admit is refused
// with the box's problem type and the time left as Retry-After, spending
// nothing; after the 10 minutes it is admitted. Other clients are not
// boxed.
func TestPenaltyBoxHoldsThenLifts(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	h := mw.Handler(okHandler())
	a, b := req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"}
	got := statuses(mw, a, a, a)
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
	clock.Advance(61 * time.Second) // a new minute: the quota would admit
	w := do(h, a)
	p := decodeProblem(t, w.Body.String())
	if w.Code != 429 || p.Type != httplimit.ProblemPenalty || w.Header().Get("Retry-After") != "539" ||
		p.Detail != "In the penalty box: every request is refused for 10m after 2 refused requests within 1m (or an operator's decision); retry in 539 s." {
		t.Fatalf("in the box: %d %q %s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
	if w.Header().Get("RateLimit") != "" {
		t.Errorf("a boxed refusal carries RateLimit %q", w.Header().Get("RateLimit"))
	}
	if w := do(h, b); w.Code != 200 {
		t.Errorf("another client: %d", w.Code)
	}
	clock.Advance(539*time.Second - time.Millisecond)
	if w := do(h, a); w.Code != 429 {
		t.Errorf("a millisecond before the box lifts: %d", w.Code)
	}
	clock.Advance(time.Millisecond)
	if w := do(h, a); w.Code != 200 || w.Header().Get("RateLimit") != `"per-minute";r=0;t=60` {
		t.Errorf("when the box lifts: %d %q (the boxed requests spent nothing)", w.Code, w.Header().Get("RateLimit"))
	}
}

// TestRefusalsByGlobalLimitsAloneBoxNoOne: a request refused by the global
// limits alone was refused because the service is full, not because its
// client spent its own quota: it does not count toward the client's
// penalty box. Refusals by the client's own limits still do.
func TestRefusalsByGlobalLimitsAloneBoxNoOne(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Global:  []sluice.Limit{sluice.FixedWindow(2, time.Minute).Named("service")},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	a, b, c := req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"}, req{remote: "192.0.2.3:1"}
	got := statuses(mw, b, c, a, a, a)
	if want := []int{200, 200, 429, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("b and c fill the service, then a ×3: %v, want %v", got, want)
	}
	clock.Advance(time.Minute) // room again, in the service and in a's quota
	got = statuses(mw, a, a, a)
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("a ×3 a minute later, refused only by the service before: %v, want %v", got, want)
	}
	clock.Advance(time.Minute) // a's own limit refused it twice: boxed
	w := do(mw.Handler(okHandler()), a)
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty {
		t.Fatalf("a after two refusals by its own limit: %d %s", w.Code, w.Body.String())
	}
}

// A refusal by a rule keyed only by what clients share (the route here) is
// not the client's doing: others spent that quota, and it boxes no one. A
// rule keyed by the client still counts.
func TestRefusalsByASharedRuleBoxNoOne(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		Rules: []httplimit.Rule{
			{Name: "search", Paths: []string{"/api/search"}, Key: []string{httplimit.KeyRoute}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}},
			{Name: "export", Paths: []string{"/api/export"}, Key: []string{httplimit.KeyRoute, httplimit.KeyClient}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}},
		},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	a, b, c := req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"}, req{remote: "192.0.2.3:1"}
	got := statuses(mw, b, c, a, a, a)
	if want := []int{200, 200, 429, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("b and c spend the route's quota, then a ×3: %v, want %v", got, want)
	}
	clock.Advance(time.Minute)
	if got := statuses(mw, a); got[0] != 200 {
		t.Fatalf("a a minute later, refused only by the shared route before: %d, want 200", got[0])
	}
	export := req{path: "/api/export", remote: "192.0.2.1:1"}
	statuses(mw, export, export, export) // its own quota, refused twice: boxed
	clock.Advance(time.Minute)
	w := do(mw.Handler(okHandler()), a)
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty {
		t.Fatalf("a after two refusals by a rule keyed by it: %d %s", w.Code, w.Body.String())
	}
}

// A boxed request's headers are those of the box's refusal, whoever writes
// them: WriteHeaders (the decision API's, forward-auth's) writes no
// RateLimit fields, as Refuse sends none. Stating the box as a RateLimit
// item would name a policy RateLimit-Policy does not list, and the draft
// modes would give the box's figures under the plan's policies.
func TestWriteHeadersOfABoxedRequestWriteNone(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans:   []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 1, Within: time.Minute, For: 10 * time.Minute},
		Headers: []string{httplimit.ModeIETF, httplimit.ModeDraft6, httplimit.ModeLegacy},
	})
	a := req{remote: "192.0.2.1:1"}
	statuses(mw, a, a) // refused once: boxed
	clock.Advance(time.Minute)
	res, err := mw.Decide(a.request())
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Discard(res)
	if !res.Penalized {
		t.Fatal("the client is not in the box")
	}
	h := http.Header{}
	mw.WriteHeaders(h, res)
	if len(h) != 0 {
		t.Errorf("a boxed request's headers: %v, want none", h)
	}
}

// A refusal by a rule whose key fell back to one value shared by every
// request without it (fallback: shared, no X-Tenant here) is not the
// client's doing either: every such client spends that quota, and it boxes
// no one. The same rule's refusal of a client's own value still counts.
func TestRefusalsUnderASharedFallbackBoxNoOne(t *testing.T) {
	mw, clock := clockedMiddleware(t, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute)}}},
		Rules: []httplimit.Rule{{Name: "search", Paths: []string{"/api/search"}, Key: []string{"header:X-Tenant"},
			HeaderFrom: httplimit.HeaderFromAny, Fallback: httplimit.FallbackShared, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}},
		Penalty: httplimit.Penalty{Refusals: 2, Within: time.Minute, For: 10 * time.Minute},
	})
	a, b := req{remote: "192.0.2.1:1"}, req{remote: "192.0.2.2:1"}
	if got, want := statuses(mw, b, a, a, a), []int{200, 429, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("b spends the shared quota, then a ×3: %v, want %v", got, want)
	}
	clock.Advance(time.Minute)
	if got := statuses(mw, a); got[0] != 200 {
		t.Fatalf("a a minute later, refused only by the quota shared by requests without X-Tenant: %d, want 200", got[0])
	}
	own := req{remote: "192.0.2.1:1", header: map[string]string{"X-Tenant": "acme"}}
	statuses(mw, own, own, own) // its own tenant's quota, refused twice: boxed
	clock.Advance(time.Minute)
	w := do(mw.Handler(okHandler()), a)
	if p := decodeProblem(t, w.Body.String()); w.Code != 429 || p.Type != httplimit.ProblemPenalty {
		t.Fatalf("a after two refusals of its own value: %d %s", w.Code, w.Body.String())
	}
}
