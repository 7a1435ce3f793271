package httplimit_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule's header match compares a request's value without the whitespace
// around it (docs/rules.md: "one value equal, case and all, but for
// whitespace around either"), and so its own Value too: a Value of "1 ",
// "\t1" or " 1\n" (as a YAML block scalar or a template leaves it) is
// 1, not a value no request is read as, which would leave the rule
// silently matching no request at all.
func TestARuleHeaderValueWithWhitespaceAroundItMatchesItsRequests(t *testing.T) {
	for _, value := range []string{"1 ", "\t1", " 1\n"} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "beta",
			Headers: []httplimit.HeaderMatch{{Name: "X-Beta", Value: value}},
			Limits:  []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
		r := req{remote: "192.0.2.1:1", header: map[string]string{"X-Beta": "1"}}
		spaced := req{remote: "192.0.2.1:1", header: map[string]string{"X-Beta": value}}
		// The plan admits 10 a minute: only the rule's limit of 1 refuses.
		if got, want := statuses(mw, r, r, spaced), []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("rule matching X-Beta %q: X-Beta 1 ×2, then %q: %v, want %v", value, value, got, want)
		}
	}
}

// An Except entry's header Value is read without the whitespace around it
// too: {X-Internal: " 1\n"} leaves out the requests carrying X-Internal: 1
// once, as {X-Internal: "1"} does, rather than none.
func TestAnExceptHeaderValueWithWhitespaceAroundItLeavesOutItsRequests(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "api",
		Except: []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "X-Internal", Value: " 1\n"}}}},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	internal := req{remote: "192.0.2.1:1", header: map[string]string{"X-Internal": "1"}}
	other := req{remote: "192.0.2.1:1", header: map[string]string{"X-Internal": "2"}}
	if got, want := statuses(mw, internal, internal, other, other), []int{200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("X-Internal 1 ×2 (left out), then 2 ×2 (the rule's): %v, want %v", got, want)
	}
}

// A header Value of whitespace alone is "" once trimmed, which would match
// the header with any value where the rule (or its Except entry) meant some
// value: Validate refuses it, and an omitted Value still means present.
func TestAHeaderValueOfWhitespaceAloneIsRefused(t *testing.T) {
	limits := []sluice.Limit{sluice.FixedWindow(1, time.Minute)}
	o := httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: limits}},
		Rules: []httplimit.Rule{{Name: "beta",
			Headers: []httplimit.HeaderMatch{{Name: "X-Beta", Value: " "}, {Name: "X-Trace"}},
			Except:  []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "X-Internal", Value: "\t\n"}}}},
			Limits:  limits}},
	}
	err := o.Validate()
	for _, field := range []string{"Rules[0].Headers[0].Value", "Rules[0].Except[0].Headers[0].Value"} {
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("Validate: %v; want an error at %s", err, field)
		}
	}
	if err != nil && strings.Contains(err.Error(), "Headers[1]") {
		t.Errorf("Validate: %v; want X-Trace without a value accepted", err)
	}
}
