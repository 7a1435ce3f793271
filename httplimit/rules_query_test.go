package httplimit

import (
	"net/url"
	"testing"
)

// FuzzQueryValue holds queryValue to url.ParseQuery: the first value of the
// name, decoded, or "" when there is none, and ambiguous when the name has
// values that differ.
func FuzzQueryValue(f *testing.F) {
	for _, s := range [][2]string{
		{"tenant=acme&page=2", "tenant"}, {"a=1&a=2", "a"}, {"t%65nant=x%20y", "tenant"}, {"k=a+b", "k"},
		{"k=%zz&k=ok", "k"}, {"k;x=1&k=2", "k"}, {"&&k=&k=3", "k"}, {"=v&k", "k"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		want, differ := "", false
		vs, _ := url.ParseQuery(raw)
		if len(vs[name]) > 0 {
			want = vs[name][0]
		}
		for _, v := range vs[name] {
			differ = differ || v != want
		}
		if got, ambiguous := queryValue(raw, name); got != want || ambiguous != differ {
			t.Fatalf("queryValue(%q, %q) = %q, %v; url.ParseQuery's first value %q, values that differ %v", raw, name, got, ambiguous, want, differ)
		}
	})
}
