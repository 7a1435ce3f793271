package httplimit

import (
	"net/url"
	"testing"
)

// FuzzQueryValue holds queryValue to url.ParseQuery: the first value of the
// name, decoded, or "" when there is none.
func FuzzQueryValue(f *testing.F) {
	for _, s := range [][2]string{
		{"tenant=acme&page=2", "tenant"}, {"a=1&a=2", "a"}, {"t%65nant=x%20y", "tenant"}, {"k=a+b", "k"},
		{"k=%zz&k=ok", "k"}, {"k;x=1&k=2", "k"}, {"&&k=&k=3", "k"}, {"=v&k", "k"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, raw, name string) {
		want := ""
		if vs, _ := url.ParseQuery(raw); len(vs[name]) > 0 {
			want = vs[name][0]
		}
		if got := queryValue(raw, name); got != want {
			t.Fatalf("queryValue(%q, %q) = %q, url.ParseQuery's first value %q", raw, name, got, want)
		}
	})
}
