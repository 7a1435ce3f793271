package httplimit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A rule matching a header's value ({name: X-Beta, value: "1"}) matches it
// however the whitespace around it is sent. Go's HTTP/2 server hands a
// handler a field value as sent, " 1" or "1\t" included, and the reverse
// proxy sends it on over HTTP/1.1, where the upstream's parser drops that
// whitespace (RFC 9110 §5.5): the upstream reads "X-Beta: 1", so a client
// adding a space escapes no rule written for its requests. An Except entry
// still takes only the value as written: a request it does not take stays
// the rule's.
func TestARuleMatchesAHeaderValueWhateverTheWhitespaceAroundIt(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "beta",
		Headers: []httplimit.HeaderMatch{{Name: "X-Beta", Value: "1"}},
		Limits:  []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	got := statuses(mw,
		req{remote: "192.0.2.1:1", header: map[string]string{"X-Beta": "1"}},
		req{remote: "192.0.2.1:1", header: map[string]string{"X-Beta": "1 "}},
		req{remote: "192.0.2.1:1", header: map[string]string{"X-Beta": "\t1"}})
	// The plan admits 10 a minute: only the rule's limit of 1 refuses.
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("X-Beta 1, then \"1 \", then tab+1 from one client: %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "api",
		Except: []httplimit.Match{{Headers: []httplimit.HeaderMatch{{Name: "X-Internal", Value: "1"}}}},
		Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}})
	internal := req{remote: "192.0.2.1:1", header: map[string]string{"X-Internal": "1"}}
	spaced := req{remote: "192.0.2.1:1", header: map[string]string{"X-Internal": " 1"}}
	if got, want := statuses(mw, internal, internal, spaced, spaced), []int{200, 200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("X-Internal 1 ×2 (left out), then \" 1\" ×2 (the rule's): %v, want %v", got, want)
	}
}
