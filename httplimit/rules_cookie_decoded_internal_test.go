package httplimit

import (
	"net/http"
	"testing"
)

// cookieDecoded reads a cookie's value as Express, Rack and PHP read it:
// its escapes decoded when every one of them decodes it so, a value
// without escapes as it is ('+' included, which PHP and Rack read as a
// space but Express keeps), and ambiguous when they decode its escapes
// differently: PHP decodes the escapes that decode beside one that does
// not, which Express and Rack keep as sent, and Express keeps as sent a
// value whose escapes are no UTF-8, which PHP and Rack decode.
func TestCookieDecodedReadsTheValueUpstreamsDecode(t *testing.T) {
	for _, c := range []struct {
		v, want   string
		ambiguous bool
	}{
		{"abc", "abc", false},
		{"a+b", "a+b", false},
		{"a b", "a b", false},
		{"%61bc", "abc", false},
		{"%61%62%63", "abc", false},
		{"a%2Bb", "a+b", false},
		{"a+b%2Fc", "a+b/c", false},
		{"%C3%A9t%C3%A9", "été", false},
		{"%20abc%09", "abc", false},
		{"%20", "", false},
		{"%zz", "%zz", false},
		{"ab%", "ab%", false},
		{"a%6", "a%6", false},
		{"%zz%61", "", true},
		{"%%61", "", true},
		{"%FF", "", true},
		{"%C3", "", true},
		{"%C3x%A9", "", true},
		{"%ED%A0%80", "", true},
	} {
		v, ambiguous := cookieDecoded(c.v)
		if v != c.want || ambiguous != c.ambiguous {
			t.Errorf("cookieDecoded(%q) = %q, %v; want %q, %v", c.v, v, ambiguous, c.want, c.ambiguous)
		}
	}
}

// A cookie's values that differ only in their spelling are one value, not
// an ambiguous pair; one of them spelled so that upstreams decode it
// differently makes the cookie ambiguous.
func TestCookieValueComparesDecodedValues(t *testing.T) {
	for _, c := range []struct {
		line, want string
		ambiguous  bool
	}{
		{"session=abc; session=%61bc", "abc", false},
		{"session=%61bc; session=abd", "abc", true},
		{"session=abc; session=%zz%61", "abc", true},
		{"session=%C3; other=1", "", true},
	} {
		v, ambiguous := cookieValue(http.Header{"Cookie": {c.line}}, "session")
		if ambiguous != c.ambiguous || !ambiguous && v != c.want {
			t.Errorf("cookieValue(%q) = %q, %v; want %q, %v", c.line, v, ambiguous, c.want, c.ambiguous)
		}
	}
}
