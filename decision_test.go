package sluice_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/sluice-dev/sluice"
)

// answerStore answers every call with its statuses, as a store that had
// decided them would: Limiter's part of a decision, on its own.
type answerStore struct{ statuses []sluice.Status }

func (s *answerStore) Apply(_ context.Context, checks []sluice.Check, out []sluice.Status) error {
	copy(out, s.statuses)
	return nil
}

// timedAnswerStore is answerStore as a TimedStore, which Limiter decides
// one check on by its own path.
type timedAnswerStore struct{ answerStore }

func (s *timedAnswerStore) ApplyTimed(ctx context.Context, checks []sluice.Check, out []sluice.Status) (int64, error) {
	return 7, s.Apply(ctx, checks, out)
}

// A call of one check on a TimedStore takes a path of its own; its Decision
// is the one the general path makes of the same status, whatever the
// Decision held before (it is reused), shadow or not, admitted or not.
func TestPropertyOneCheckDecidesAsTheGeneralPath(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(t *rapid.T) {
		dur := func(name string) time.Duration {
			return time.Duration(rapid.Int64Range(0, int64(time.Hour)).Draw(t, name))
		}
		st := sluice.Status{
			Allowed:    rapid.Bool().Draw(t, "allowed"),
			Remaining:  rapid.Int64Range(0, 100).Draw(t, "remaining"),
			ResetAfter: dur("reset"),
			RetryAfter: dur("retry"),
			Delay:      dur("delay"),
		}
		l := sluice.GCRA(10, time.Second).Named("one").WithShadow(rapid.Bool().Draw(t, "shadow"))
		checks := []sluice.Check{{Key: "k", Limit: l, Cost: 1}}
		// Both Decisions first hold a refusal of two other limits.
		stale := []sluice.Check{
			{Key: "k", Limit: sluice.FixedWindow(1, time.Minute).Named("a"), Cost: 1},
			{Key: "k", Limit: sluice.FixedWindow(1, time.Hour).Named("b"), Cost: 1},
		}
		refusal := &answerStore{statuses: []sluice.Status{{RetryAfter: time.Second}, {RetryAfter: time.Minute}}}
		var one, general sluice.Decision
		for _, d := range []*sluice.Decision{&one, &general} {
			if err := sluice.NewLimiter(refusal).AllowInto(ctx, d, stale); err != nil || d.Allowed {
				t.Fatalf("stale decision: %+v, %v", d, err)
			}
		}
		if err := sluice.NewLimiter(&timedAnswerStore{answerStore{[]sluice.Status{st}}}).AllowInto(ctx, &one, checks); err != nil {
			t.Fatal(err)
		}
		if err := sluice.NewLimiter(&answerStore{[]sluice.Status{st}}).AllowInto(ctx, &general, checks); err != nil {
			t.Fatal(err)
		}
		if one.At.IsZero() {
			t.Fatalf("the one-check path did not take the store's time")
		}
		one.At = general.At
		if !exportedEqual(one, general) {
			t.Fatalf("one check, status %+v:\n own path %+v\n general  %+v", st, one, general)
		}
	})
}

// The one-check path validates as ValidateChecks does, with its message.
func TestOneCheckIsValidatedAsTheGeneralPath(t *testing.T) {
	ctx := context.Background()
	bad := []sluice.Check{
		{Key: "", Limit: sluice.GCRA(1, time.Second), Cost: 1},
		{Key: "k", Limit: sluice.GCRA(1, time.Second), Cost: -1},
		{Key: "k", Limit: sluice.GCRA(0, time.Second), Cost: 1},
		{Key: "k", Limit: sluice.Limit{}, Cost: 1},
	}
	lim := sluice.NewLimiter(&timedAnswerStore{answerStore{[]sluice.Status{{Allowed: true}}}})
	for _, c := range bad {
		checks := []sluice.Check{c}
		var d sluice.Decision
		err := lim.AllowInto(ctx, &d, checks)
		want := sluice.ValidateChecks(checks)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("check %+v: got %v, want %v", c, err, want)
		}
	}
}

// exportedEqual reports whether a and b, structs of one type, hold deeply
// equal values in every exported field (what a caller can see).
func exportedEqual(a, b any) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}
