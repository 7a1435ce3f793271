package httplimit

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// Result's documentation: an exempt Result has Exempt and ExemptBy set,
// "the other fields are then zero but Decision.Allowed". A pooled Result
// keeps the fields of the request it last decided, so one that held a
// penalty box's refusal and is taken from the pool for an exempt request
// must not keep Penalized (nor the status route's refusal, nor the
// decision's time): a caller of Decide that asks res.Penalized first would
// refuse the exempt request as boxed. The pool hands a Result back when
// it will (never for certain, and at random under -race), so this reuses
// the boxed Result as result() would hand it back.
func TestAnExemptResultIsNotPenalized(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	t.Cleanup(func() { st.Close() })
	m, err := New(sluice.NewLimiter(st), Options{
		Plans:   []*Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
		Exempt:  []string{"GET /healthz"},
		Penalty: Penalty{Refusals: 1, Within: time.Minute, For: 10 * time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Penalize(ctx, "ip:192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/api", nil)
	r.RemoteAddr = "192.0.2.1:1234"
	res, err := m.Decide(r)
	if err != nil || !res.Penalized {
		t.Fatalf("the boxed client's request: %v %+v", err, res)
	}
	res.statusRefused = true // as StatusHandler leaves a refused read
	m.Discard(res)
	res.pooled = false // taken from the pool again, as result() does
	ex := m.exempted(httptest.NewRequest("GET", "/healthz", nil), res, ExemptRoute)
	switch {
	case !ex.Exempt || ex.ExemptBy != ExemptRoute || !ex.Decision.Allowed:
		t.Errorf("not exempt by route and admitted: %+v", ex)
	case ex.Penalized:
		t.Error("an exempt Result has Penalized set, left from the request the pooled Result decided before")
	case ex.statusRefused:
		t.Error("an exempt Result is a refused status read, left from the request the pooled Result decided before")
	case ex.Identity != (Identity{}) || ex.Cost != 0 || len(ex.Checks) != 0 || !ex.Now.IsZero() ||
		len(ex.Decision.Statuses) != 0 || len(ex.Decision.Violated) != 0:
		t.Errorf("an exempt Result's other fields are not zero: %+v", ex)
	}
	m.Discard(ex)
}
