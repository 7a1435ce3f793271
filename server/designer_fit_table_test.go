package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/sim"
)

// fitLimits are the limits the designer page suggests (100/1m,
// 10000/month) and others a user types, from one a second to a million a
// day.
var fitLimits = []string{"1/s", "100/1m", "1000/1h", "10000/1d", "10000/month", "1000000/1d"}

// Every built-in pattern the page offers, sized by default, fits the
// default bounds at every limit of fitLimits before it is built
// (fitToBounds: no traffic generated, no replay).
func TestDesignerFitsEveryPatternAtEveryLimit(t *testing.T) {
	l := designerLimits{}.withDefaults()
	for _, limit := range fitLimits {
		for _, p := range sim.Patterns() {
			req := sim.Request{Pattern: &sim.Pattern{Name: p}, Limit: limit, MaxArrivals: l.maxArrivals, MaxWork: l.maxWork}
			fitted, err := fitToBounds(req)
			if err != nil {
				t.Errorf("%s at %s: %v", p, limit, err)
				continue
			}
			var tl *sim.TooLargeError
			if errors.As(req.Validate(), &tl) && fitNote(req, fitted, l) == "" {
				t.Errorf("%s at %s: fitted above the %s bound, but no note", p, limit, tl.Bound)
			}
		}
	}
}

// Every built-in pattern the page offers, sized by default, is run at
// every limit of fitLimits (answered 200), its traffic built and replayed
// within bounds a hundredth of the defaults (so that the fitting once the
// traffic is built, on the upper estimate of work, is reached at every
// limit within a few hundred milliseconds of replay), and a note says how
// the run differs from the pattern as asked.
func TestDesignerFitsAndRunsEveryPatternAtEveryLimit(t *testing.T) {
	d := newDesigner(designerLimits{maxArrivals: 2_000, maxWork: 100_000, timeout: 2 * time.Minute})
	for _, limit := range fitLimits {
		for _, p := range sim.Patterns() {
			checkFittedRun(t, d, p, limit)
		}
	}
}

// checkFittedRun runs pattern at limit, sized by default, through d as the
// page sends it, and fails t unless it is answered 200 within d's bound of
// requests with a note that names each way the run differs from the
// pattern as asked: a note when Validate refuses the pattern as asked, and
// when the replay's quantity or span is not the default's. It returns the
// note.
func checkFittedRun(t *testing.T, d *designer, pattern, limit string) string {
	t.Helper()
	body := fmt.Sprintf(`{"pattern":{"name":%q,"seed":1},"limit":%q,"burst":0,"algorithms":[],"seed":1}`, pattern, limit)
	w := httptest.NewRecorder()
	d.handleRun(w, httptest.NewRequest("POST", "/designer/run", strings.NewReader(body)))
	if w.Code != http.StatusOK {
		t.Errorf("%s at %s: %d %.300s", pattern, limit, w.Code, w.Body)
		return ""
	}
	var got struct {
		Result struct {
			Quantity int64        `json:"quantity"`
			Requests int          `json:"requests"`
			Duration sim.Duration `json:"duration"`
		} `json:"result"`
		Note string `json:"note"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	r, note := got.Result, got.Note
	q, win, err := sim.ParseRate(limit)
	if err != nil {
		t.Fatal(err)
	}
	if max := d.limits.maxArrivals; r.Requests > max+max/10 {
		t.Errorf("%s at %s: %d requests, above the bound of %d", pattern, limit, r.Requests, max)
	}
	asked := sim.Request{Pattern: &sim.Pattern{Name: pattern}, Limit: limit, MaxArrivals: d.limits.maxArrivals, MaxWork: d.limits.maxWork}
	var tl *sim.TooLargeError
	if errors.As(asked.Validate(), &tl) && note == "" {
		t.Errorf("%s at %s: above the %s bound as asked, run with no note", pattern, limit, tl.Bound)
	}
	if r.Quantity != q && !strings.Contains(note, fmt.Sprintf("at %d/", r.Quantity)) {
		t.Errorf("%s at %s: replayed at a quantity of %d, the note does not say so: %q", pattern, limit, r.Quantity, note)
	}
	// The trace spans to its last request: within a window of the end.
	if r.Duration.D() < 9*win && !strings.Contains(note, "windows (not 10)") {
		t.Errorf("%s at %s: replayed over %v, the note does not say so: %q", pattern, limit, r.Duration, note)
	}
	if note != "" {
		t.Logf("%s at %s: %s", pattern, limit, note)
	}
	return note
}

// A limit compared with a reference above it, with a burst, is made
// smaller with the reference, in the same ratio: 800000/1d burst 200000
// against 1000000/1d is replayed as 16000/1d burst 4000 against 20000/1d
// (before its traffic is built), and the note says so.
func TestDesignerFitsTheLimitAndBurstWithTheReference(t *testing.T) {
	l := designerLimits{}.withDefaults()
	req := sim.Request{Pattern: &sim.Pattern{Name: sim.PatternSteady}, Limit: "800000/1d", Reference: "1000000/1d", Burst: 200_000,
		MaxArrivals: l.maxArrivals, MaxWork: l.maxWork}
	fitted, err := fitToBounds(req)
	if err != nil {
		t.Fatal(err)
	}
	rq, _, _ := sim.ParseRate(fitted.Reference)
	lq, _, _ := sim.ParseRate(fitted.Limit)
	if rq >= 1_000_000 || lq*10 != rq*8 || fitted.Burst*10 != rq*2 {
		t.Errorf("fitted to %s burst %d against %s: want the limit and burst 8 and 2 tenths of the reference", fitted.Limit, fitted.Burst, fitted.Reference)
	}
	note := fitNote(req, fitted, l)
	t.Log(note)
	for _, want := range []string{
		fmt.Sprintf("at %s (not 800000/1d) against %s (not 1000000/1d), burst %d (not 200000)", fitted.Limit, fitted.Reference, fitted.Burst),
		fmt.Sprintf("%d requests a window per key (not 1200000)", rq*12/10),
	} {
		if !strings.Contains(note, want) {
			t.Errorf("the note does not say %q: %q", want, note)
		}
	}
}
