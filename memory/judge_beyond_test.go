package memory

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Once the store keeps maxExtraJudges parameter sets beyond each limit's
// first, all limits together, a limit's second set is one it does not
// keep, as its 65th is: its refused client is not freed by a flood of new
// keys either.
func TestASetBeyondTheGlobalBoundNeverFreesItsRefusedClient(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) // stands still
	s := New(WithMaxKeys(16), WithShards(1), WithSweepInterval(0), WithClock(func() time.Time { return at }))
	defer s.Close()
	out := make([]sluice.Status, 1)
	ask := func(key string, l sluice.Limit, cost int64) bool {
		t.Helper()
		if err := s.Apply(context.Background(), []sluice.Check{{Key: key, Limit: l, Cost: cost}}, out); err != nil {
			t.Fatal(err)
		}
		return out[0].Allowed
	}
	ask("customer", sluice.FixedWindow(1000, time.Minute).Named("per-minute"), 1)
	s.limits.extra.Store(maxExtraJudges) // every other limit's sets used it up
	victim := sluice.FixedWindow(10, time.Minute).Named("per-minute")
	if !ask("victim", victim, 10) || ask("victim", victim, 1) {
		t.Fatalf("the victim was not admitted 10 of 10, then refused: %+v", out[0])
	}
	if n := len(s.limits.find(&victim).list()); n != 1 {
		t.Fatalf("the store keeps %d sets of per-minute, want 1", n)
	}
	flood := sluice.FixedWindow(5, time.Hour).Named("login")
	for i := range 100 {
		ask("flood-"+strconv.Itoa(i), flood, 1)
		if ask("victim", victim, 1) {
			t.Fatalf("the victim, refused at 10 of 10, was admitted after %d new keys; %+v", i+1, s.Stats())
		}
	}
}

// Meeting again a set the store does not keep allocates nothing, whether
// its window is one of those noted or one met past them; meeting a
// stricter set of a noted window lowers that window's quantity.
func TestMeetingASetBeyondTheBoundsAgainAllocatesNothing(t *testing.T) {
	s := New(WithShards(1), WithSweepInterval(0))
	defer s.Close()
	for i := range maxJudges {
		l := sluice.FixedWindow(1000+int64(i), time.Minute).Named("per-minute")
		s.limits.note(&l)
	}
	var beyond []sluice.Limit
	for h := range maxBeyondWindows + 2 {
		beyond = append(beyond, sluice.FixedWindow(50, time.Duration(h+1)*time.Hour).Named("per-minute"))
	}
	beyond = append(beyond, sluice.FixedWindow(5, time.Hour).Named("per-minute"), sluice.FixedWindow(50, 2*time.Hour).Named("per-minute"))
	for i := range beyond {
		s.limits.note(&beyond[i])
	}
	lr := s.limits.find(&beyond[0])
	if n := len(lr.list()); n != maxJudges {
		t.Fatalf("the store keeps %d sets, want %d", n, maxJudges)
	}
	bw := lr.beyond.windows.Load()
	if bw.n != maxBeyondWindows || bw.win[0].least != 5 || bw.win[1].least != 50 {
		t.Errorf("windows noted: %d, least quantities %d and %d; want %d, 5 and 50", bw.n, bw.win[0].least, bw.win[1].least, maxBeyondWindows)
	}
	if q := lr.beyond.quantity.Load() - 1; q != 50 {
		t.Errorf("least quantity of the windows past those noted: %d, want 50", q)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		for i := range beyond {
			s.limits.note(&beyond[i])
		}
	}); allocs != 0 {
		t.Errorf("meeting %d sets beyond the bounds again allocated %.1f times", len(beyond), allocs)
	}
}

// The bucket sets a store does not keep are noted by the longest debt any
// of them may write (its whole burst, and a queue's MaxWait), which bounds
// how long after a limit's latest enforcing check a state may refuse;
// meeting them again allocates nothing.
func TestBucketSetsBeyondTheBoundsAreNotedByTheirLongestDebt(t *testing.T) {
	s := New(WithShards(1), WithSweepInterval(0))
	defer s.Close()
	for i := range maxJudges {
		l := sluice.LeakyBucket(1000+int64(i), time.Minute).Named("quota")
		s.limits.note(&l)
	}
	beyond := []sluice.Limit{
		sluice.LeakyBucket(10, time.Hour).WithMaxWait(time.Minute).Named("quota"), // 1 h + 1 min
		sluice.LeakyBucket(1, time.Hour).Named("quota"),                           // 1 h
		sluice.LeakyBucket(5, time.Second).Named("quota"),
	}
	for i := range beyond {
		s.limits.note(&beyond[i])
	}
	lr := s.limits.find(&beyond[0])
	if got, want := lr.beyond.owes.Load(), int64((time.Hour+time.Minute)/time.Microsecond); got != want {
		t.Errorf("longest debt noted: %d µs, want %d", got, want)
	}
	if allocs := testing.AllocsPerRun(100, func() {
		for i := range beyond {
			s.limits.note(&beyond[i])
		}
	}); allocs != 0 {
		t.Errorf("meeting %d bucket sets beyond the bounds again allocated %.1f times", len(beyond), allocs)
	}
}
