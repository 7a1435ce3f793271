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
// there). Nothing here is pooled, so the counts hold under the race
// detector too.
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
}
