package httplimit_test

import (
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// noPanic runs f and reports a panic as a test failure.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v; the library promises an answer, never a panic (README, docs/decisions.md)", what, r)
		}
	}()
	f()
}

// Policy.Checks of the nil plan, Policy.Plan's answer for a name it does
// not know, are the global checks alone: an answer, never a panic.
func TestPolicyChecksOfAPlanItDoesNotKnowAreTheGlobalOnes(t *testing.T) {
	m, err := httplimit.New(sluice.NewLimiter(memory.New()), httplimit.Options{
		Plans:  []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerSecond(1)}}},
		Global: []sluice.Limit{sluice.PerSecond(100).Named("global")},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := m.Policy()
	noPanic(t, `Policy.Checks(nil, Policy.Plan("gold"), "user:alice", 1)`, func() {
		got := p.Checks(nil, p.Plan("gold"), "user:alice", 1)
		if len(got) != 1 || got[0].Key != httplimit.GlobalSubject {
			t.Errorf("Checks with no plan: %v, want the global check alone", got)
		}
	})
}

// The zero Middleware reports no limits: its Policy (nil) has no plan.
func TestTheZeroMiddlewaresPolicyHasNoPlan(t *testing.T) {
	var m httplimit.Middleware
	noPanic(t, `(zero Middleware).Policy().Plan("free")`, func() {
		if pl := m.Policy().Plan("free"); pl != nil {
			t.Errorf("Plan: %v, want nil", pl)
		}
	})
}

// The zero FieldError, whose Err is nil, says "invalid".
func TestTheZeroFieldErrorSaysInvalid(t *testing.T) {
	var e httplimit.FieldError
	noPanic(t, "(zero httplimit.FieldError).Error()", func() { _ = e.Error() })
}
