package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Pins refusingCheck's doc comment: of the enforcing checks that refused,
// the one with the longest wait is told, "the first of equals". Two limits
// of a plan refuse with the same wait (30 s): the first, "a" (10 a
// minute), is the deciding one, whose figures the single-limit modes
// (draft-7: limit=10) and Deciding state, not the second, "b" (20 a
// minute).
func TestOfRefusingLimitsWithEqualWaitsTheFirstDecides(t *testing.T) {
	m, err := New(sluice.NewLimiter(nil), Options{
		Plans: []*Plan{{Name: "free", Limits: []sluice.Limit{
			sluice.FixedWindow(10, time.Minute).Named("a"), sluice.FixedWindow(20, time.Minute).Named("b")}}},
		Headers: []string{ModeDraft7},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := m.policy.Plan("free")
	res := &Result{Identity: Identity{Plan: p}, Now: time.Unix(1_800_000_000, 0)}
	res.Checks = m.policy.Checks(nil, p, "key:x", 1)
	refused := sluice.Status{Remaining: 0, ResetAfter: 30 * time.Second, RetryAfter: 30 * time.Second}
	res.Decision = sluice.Decision{Limit: p.Limits[1], Remaining: 0, ResetAfter: 30 * time.Second, RetryAfter: 30 * time.Second,
		Violated: []string{"a", "b"}, Statuses: []sluice.Status{refused, refused}}
	if l, _ := res.Deciding(); l.Name() != "a" {
		t.Errorf("Deciding() = %q, want the first of the equal refusals, \"a\"", l.Name())
	}
	h := http.Header{}
	m.WriteHeaders(h, res)
	if got, want := h.Get("RateLimit"), "limit=10, remaining=0, reset=30"; got != want {
		t.Errorf("draft-7 RateLimit = %q, want %q (a's figures)", got, want)
	}
}
