package querypair

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/phpname"
)

// Values reads the pairs of a name however many pairs the query has, where
// url.ParseQuery reads none of more than 10,000, in order, decoded and
// untrimmed, under the name in any case and as PHP names it; it stops at
// a pair of the name that upstreams may read differently, and reads a "#"
// as any other byte.
func TestValuesReadsEveryPairOfTheName(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
		ok   bool
	}{
		{"_method=DELETE", []string{"DELETE"}, true},
		{strings.Repeat("&", 10_000) + "_method=DELETE", []string{"DELETE"}, true},
		{"_METHOD=put&.method=+patch%20&%20_method=get#x&x=1", []string{"put", " patch ", "get#x"}, true},
		{"_method_=x&method=y&_method[]=z", nil, true},
		{"_method=put&_method=DELETE;x&_method=get", []string{"put"}, false},
		{"_method=put&[_method]=get", []string{"put"}, false},
		{"_method=%zz", nil, false},
		{"x=%zz&y=1;z=2", nil, true},
		{"", nil, true},
	} {
		var got []string
		ok := Values(c.raw, "_method", func(v string) { got = append(got, v) })
		if !slices.Equal(got, c.want) || ok != c.ok {
			t.Errorf("Values(%.40q…) = %q, %v; want %q, %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

// pairValue reads a pair of a query string or form body as url.ParseQuery
// does, and a pair url.ParseQuery refuses is named when an upstream that
// reads it anyway may take it for the field: its name, decoded as PHP
// decodes it (escapes that do not decode kept as they are) and named as
// PHP names it, or a part of it split on ";".
func TestPairValueNamesThePairsUpstreamsMayReadAsTheField(t *testing.T) {
	for _, c := range []struct {
		pair, v   string
		named, ok bool
	}{
		{"username=alice", "alice", true, true},
		{"USER%4Eame=a+b%20c", "a b c", true, true},
		{"user.name=alice", "", false, true}, // PHP's user_name, not username
		{"password=100%", "", false, true},
		{"username=alice%zz", "", true, false},
		{"username%zz=alice", "", false, false},
		{"username%00%zz=alice", "", true, false}, // PHP's username, cut at the NUL
		{"+user%4Eame%00%=alice", "", true, false},
		{"username%00%zz=alice;x", "", true, false},
		{"username=alice;x", "", true, false},
		{"x=1;username=alice", "", true, false},
		{"x=1;y=2", "", false, false},
		{"=", "", false, true},
		{"", "", false, true},
	} {
		v, named, ok := pairValue(c.pair, "username", phpname.Of("username"))
		if v != c.v || named != c.named || ok != c.ok {
			t.Errorf("pairValue(%q) = %q, named %v, ok %v; want %q, %v, %v", c.pair, v, named, ok, c.v, c.named, c.ok)
		}
	}
}

// A pair of the name is found among others without allocating, whatever
// their names (a JSON:API query, a thousand a[b] parameters), and so is a
// name PHP renames.
func TestValuesFindsANameWithoutAllocating(t *testing.T) {
	raw := "filter[status]=open&page[size]=10&" + strings.Repeat("a[b]=&", 1000) + "tenant=acme&x.y=1"
	for _, name := range []string{"tenant", "x.y", "x_y"} {
		n := testing.AllocsPerRun(100, func() { Values(raw, name, func(string) {}) })
		if n != 0 {
			t.Errorf("Values(…, %q): %v allocations, want 0 (nothing decoded)", name, n)
		}
	}
}
