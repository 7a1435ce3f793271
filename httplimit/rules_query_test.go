package httplimit

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzQueryValue holds queryValue to url.ParseQuery: the value, decoded and
// trimmed, of the parameters named name in any case or as PHP names them,
// or "" when there is none, and ambiguous when they have values that
// differ or a pair url.ParseQuery refuses may be one of them to another
// upstream (see pairValue).
func FuzzQueryValue(f *testing.F) {
	for _, s := range [][2]string{
		{"tenant=acme&page=2", "tenant"}, {"a=1&a=2", "a"}, {"t%65nant=x%20y", "tenant"}, {"k=a+b", "k"},
		{"k=%zz&k=ok", "k"}, {"k;x=1&k=2", "k"}, {"&&k=&k=3", "k"}, {"=v&k", "k"},
		{"TENANT=acme&Tenant=acme%20", "tenant"}, {"ten.ant=a&ten_ant=b", "ten_ant"}, {"+k=%09v", "k"},
		{"=&=0", ""}, {"&=0", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		var want string
		found, differ := false, false
		vs, _ := url.ParseQuery(raw)
		for k, kvs := range vs {
			if !sameName(k, name, phpName(name)) {
				continue
			}
			for _, v := range kvs {
				if v = trimValue(v); !found {
					want, found = v, true
				}
				differ = differ || v != want
			}
		}
		for pair := range strings.SplitSeq(raw, "&") {
			if _, named, ok := pairValue(pair, name, phpVarOf(name)); named && !ok {
				differ = true
			}
		}
		got, ambiguous := queryValue(raw, name)
		if ambiguous != differ || !differ && got != want {
			t.Fatalf("queryValue(%q, %q) = %q, %v; url.ParseQuery's value %q, values that differ %v", raw, name, got, ambiguous, want, differ)
		}
	})
}
