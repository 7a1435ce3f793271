package server

import "testing"

// TestSameHeaderNameReadsDotsAndUnderscoresAsHyphens: a header name is one
// with another in any case and with "_" or "." for "-", so that the
// headers sluice removes, refuses or reads as an override include every
// spelling a CGI-style upstream (PHP's too) reads as the one named.
func TestSameHeaderNameReadsDotsAndUnderscoresAsHyphens(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"X.Api.Key", "X-Api-Key", true},
		{"x_api.KEY", "X-Api-Key", true},
		{"X-Api-Keys", "X-Api-Key", false},
		{"X:Api-Key", "X-Api-Key", false},
	} {
		if got := sameHeaderName(c.a, c.b); got != c.want {
			t.Errorf("sameHeaderName(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	for _, name := range []string{"X.Forwarded.For", "X.Real.IP", "X.Forwarded.Host", "True.Client.IP"} {
		if !untrustedHop(name) {
			t.Errorf("untrustedHop(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"X.HTTP.Method.Override", "X.Method_Override"} {
		if !methodOverride(name) {
			t.Errorf("methodOverride(%q) = false, want true", name)
		}
	}
}
