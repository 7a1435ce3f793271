package redis

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/internal/redistest"
)

// stringState decodes a state kept in a string (see lua/state.lua): the
// tag g (and ":" without a token), "@" and when the state was born, "|",
// then t, a and b as little-endian doubles; or without the "@" and born,
// as written before.
func stringState(s string) (g string, t, a, b int64, ok bool) {
	n := len(s)
	if n < 26 || s[n-25] != '|' {
		return "", 0, 0, 0, false
	}
	var v [3]int64
	for i := range v {
		v[i] = int64(math.Float64frombits(binary.LittleEndian.Uint64([]byte(s[n-24+8*i:]))))
	}
	g = s[:n-25]
	if n >= 36 && s[n-34] == '@' {
		g = strings.TrimSuffix(s[:n-34], ":")
	}
	return g, v[0], v[1], v[2], true
}

// A state in the decimal text "g t a b" that sluice wrote before the packed
// form is read as the same state, and rewritten packed.
func TestAStateInTheOldDecimalFormIsStillRead(t *testing.T) {
	t.Parallel()
	srv := redistest.Standalone(t)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	store := New(srv.Client(t), WithTimeForTesting(func() time.Time { return now }), WithTimeout(testTimeout))
	l := sluice.FixedWindow(5, time.Hour).Named("fw")
	start := sluice.MicrosSinceEpoch(now.Truncate(time.Hour))
	srv.MustDo("SET", Key("u", "fw"), "1 "+itoa(int(start))+" 3 0", "PX", "100000")
	out := make([]sluice.Status, 1)
	if err := store.Apply(context.Background(), []sluice.Check{{Key: "u", Limit: l, Cost: 1}}, out); err != nil {
		t.Fatal(err)
	}
	if !out[0].Allowed || out[0].Remaining != 1 {
		t.Errorf("%+v, want allowed with 1 left: the 3 units counted in the decimal state", out[0])
	}
	raw, err := srv.Do("GET", Key("u", "fw"))
	if err != nil {
		t.Fatal(err)
	}
	g, ts, a, b, ok := stringState(raw.(string))
	if !ok || g != "1" || ts != start || a != 4 || b != 0 {
		t.Errorf("stored %q = %q %d %d %d (%v), want 1 %d 4 0 packed", raw, g, ts, a, b, ok, start)
	}
}
