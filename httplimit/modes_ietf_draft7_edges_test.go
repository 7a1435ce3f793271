package httplimit

import (
	"net/http"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// Pins ModeDraft7's doc comment ("Beside ModeIETF, whose fields of the same
// names it cannot share, it sends nothing") and docs/headers.md ("`ietf`
// and `draft-7` both name their fields `RateLimit` and `RateLimit-Policy`:
// configured together, only the IETF ones are sent"). 100 a minute, 41
// left, 1.5 s to the window's end: t = 2 (rounded up), w = 60.
func TestIETFBesideDraft7SendsTheIETFFieldsAlone(t *testing.T) {
	for _, modes := range [][]string{{ModeIETF, ModeDraft7}, {ModeDraft7, ModeIETF}} {
		m, err := New(sluice.NewLimiter(nil), Options{
			Plans:   []*Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(100, time.Minute).Named("per-minute")}}},
			Headers: modes,
		})
		if err != nil {
			t.Fatal(err)
		}
		p := m.policy.Plan("free")
		res := &Result{Identity: Identity{Plan: p}, Now: time.Unix(1_800_000_000, 0)}
		res.Checks = m.policy.Checks(nil, p, "key:x", 1)
		res.Decision = sluice.Decision{Allowed: true, Limit: p.Limits[0], Remaining: 41, ResetAfter: 1500 * time.Millisecond,
			Statuses: []sluice.Status{{Allowed: true, Remaining: 41, ResetAfter: 1500 * time.Millisecond}}}
		h := http.Header{}
		m.WriteHeaders(h, res)
		if got, want := h.Values("RateLimit"), `"per-minute";r=41;t=2`; len(got) != 1 || got[0] != want {
			t.Errorf("%v: RateLimit %q, want [%q]", modes, got, want)
		}
		if got, want := h.Values("RateLimit-Policy"), `"per-minute";q=100;w=60`; len(got) != 1 || got[0] != want {
			t.Errorf("%v: RateLimit-Policy %q, want [%q]", modes, got, want)
		}
	}
}
