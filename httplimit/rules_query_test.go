package httplimit

import (
	"net/url"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/phpname"
	"github.com/sluice-dev/sluice/internal/querypair"
)

// FuzzQueryValue holds queryValue to url.ParseQuery of the query before a
// "#": the value, decoded and trimmed, of the parameters named name in any
// case or as PHP names them, or "" when there is none, and ambiguous when
// they have values that differ, a pair url.ParseQuery refuses may be one
// of them to another upstream (see querypair.Values), or a pair past the
// "#" and an "&", which Go alone reads, is one of them.
func FuzzQueryValue(f *testing.F) {
	for _, s := range [][2]string{
		{"tenant=acme&page=2", "tenant"}, {"a=1&a=2", "a"}, {"t%65nant=x%20y", "tenant"}, {"k=a+b", "k"},
		{"k=%zz&k=ok", "k"}, {"k;x=1&k=2", "k"}, {"&&k=&k=3", "k"}, {"=v&k", "k"},
		{"TENANT=acme&Tenant=acme%20", "tenant"}, {"ten.ant=a&ten_ant=b", "ten_ant"}, {"+k=%09v", "k"},
		{"=&=0", ""}, {"&=0", ""}, {"k=a#b", "k"}, {"#&=", ""}, {"v=1#x&k=2", "k"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		var want string
		found, differ := false, false
		query, fragment, _ := strings.Cut(raw, "#")
		_, goOnly, _ := strings.Cut(fragment, "&")
		vs, _ := url.ParseQuery(query)
		for k, kvs := range vs {
			if !querypair.SameName(k, name, phpname.Of(name)) {
				continue
			}
			for _, v := range kvs {
				if v = trimValue(v); !found {
					want, found = v, true
				}
				differ = differ || v != want
			}
		}
		gs, _ := url.ParseQuery(goOnly)
		for k := range gs {
			differ = differ || querypair.SameName(k, name, phpname.Of(name))
		}
		for _, s := range []string{query, goOnly} {
			if !querypair.Values(s, name, func(string) {}) {
				differ = true
			}
		}
		got, ambiguous := queryValue(raw, name)
		if ambiguous != differ || !differ && got != want {
			t.Fatalf("queryValue(%q, %q) = %q, %v; url.ParseQuery's value %q, values that differ %v", raw, name, got, ambiguous, want, differ)
		}
	})
}
