package httplimit

import (
	"net/http"
	"strings"
	"testing"
)

// A query: or cookie: key finds its parameter or cookie among the others
// of a request without allocating, whatever their names: a JSON:API query
// (filter[status], page[size]), a thousand a[b] parameters, the cookies of
// ASP.NET Core and Matomo (.AspNetCore.Session, _pk_id.1.abcd), and a key
// whose own name PHP renames (.AspNetCore.Session is _AspNetCore_Session
// there). phpName returns a name PHP renames nothing of as it is. Nothing
// here is pooled, so the counts hold under the race detector too.
func TestQueryAndCookieNamesAreMatchedWithoutAllocating(t *testing.T) {
	jsonAPI := "filter[status]=open&page[size]=10&page[number]=2&tenant=acme"
	many := strings.Repeat("a[b]=&", 1000) + "tenant=acme"
	for _, raw := range []string{jsonAPI, many} {
		if v, _ := queryValue(raw, "tenant"); v != "acme" {
			t.Fatalf("queryValue(%.40q…, tenant) = %q", raw, v)
		}
		if n := testing.AllocsPerRun(100, func() { queryValue(raw, "tenant") }); n != 0 {
			t.Errorf("queryValue(%.40q…, tenant): %v allocations, want 0 (nothing decoded)", raw, n)
		}
	}
	h := http.Header{"Cookie": {".AspNetCore.Session=CfDJ8; .AspNetCore.Antiforgery.x1=CfDJ9; _pk_id.1.abcd=b; sid=abc"}}
	for name, want := range map[string]string{"sid": "abc", ".AspNetCore.Session": "CfDJ8", "_AspNetCore_Session": "CfDJ8"} {
		if v, _ := cookieValue(h, name); v != want {
			t.Fatalf("cookieValue(%q) = %q, want %q", name, v, want)
		}
		if n := testing.AllocsPerRun(100, func() { cookieValue(h, name) }); n != 0 {
			t.Errorf("cookieValue(%q): %v allocations, want 0", name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { phpName("filter[status]") }); n != 0 {
		t.Errorf("phpName(filter[status]), which PHP renames nothing of: %v allocations, want 0", n)
	}
}

// phpVar reads a name as PHP names it without building that name: its
// String is the name phpNameModel builds, and two compare in any case as
// strings.EqualFold compares those names (Unicode folding, ſ as s and K
// (Kelvin) as k, bytes that are no UTF-8 alike), so that sameName is
// EqualFold(k, name) or, PHP keeping name, EqualFold of the PHP names.
// Every pair of names of up to 3 symbols that PHP renames, folds or cuts
// is compared.
func TestPHPNamesCompareAsTheBuiltNamesDo(t *testing.T) {
	symbols := []string{"S", "s", "\u017f", "k", "\u212a", ".", " ", "[", "]", "_", "\x00", "\xff"}
	names := []string{""}
	for start, n := 0, 0; n < 3; n++ {
		end := len(names)
		for _, p := range names[start:end] {
			for _, s := range symbols {
				names = append(names, p+s)
			}
		}
		start = end
	}
	built, vars := make([]string, len(names)), make([]phpVar, len(names))
	for i, k := range names {
		if built[i], vars[i] = phpNameModel(k), phpVarOf(k); phpName(k) != built[i] {
			t.Fatalf("phpName(%q) = %q, want %q", k, phpName(k), built[i])
		}
	}
	for i, k := range names {
		for j, name := range names {
			want := strings.EqualFold(built[i], built[j])
			if got := vars[i].EqualFold(vars[j]); got != want {
				t.Fatalf("phpVarOf(%q).EqualFold(phpVarOf(%q)) = %v; PHP's names %q and %q: %v", k, name, got, built[i], built[j], want)
			}
			want = strings.EqualFold(k, name) || built[j] != "" && want
			if got := sameName(k, name, built[j]); got != want {
				t.Fatalf("sameName(%q, %q, %q) = %v, want %v", k, name, built[j], got, want)
			}
			if got := sameVar(k, name, vars[j]); got != want {
				t.Fatalf("sameVar(%q, %q) = %v, want %v", k, name, got, want)
			}
		}
	}
}

// phpNameModel builds the name PHP gives a request variable sent as k (see
// phpName) byte by byte, as php_register_variable_ex does.
func phpNameModel(k string) string {
	if i := strings.IndexByte(k, 0); i >= 0 {
		k = k[:i]
	}
	b := []byte(strings.TrimLeft(k, " "))
	for i, c := range b {
		switch c {
		case ' ', '.':
			b[i] = '_'
		case '[':
			if i == 0 {
				return ""
			}
			if strings.IndexByte(string(b[i+1:]), ']') >= 0 {
				return string(b)
			}
			for j := i; j < len(b); j++ {
				if b[j] == ' ' || b[j] == '.' || b[j] == '[' {
					b[j] = '_'
				}
			}
			return string(b)
		}
	}
	return string(b)
}
