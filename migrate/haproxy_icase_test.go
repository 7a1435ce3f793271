package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportHAProxyCaseInsensitiveHeaderValueIsReported: hdr(X) -i v
// matches the value in any case, where a sluice rule's header match is
// exact (no rule matches a header value in any case); a value of more
// spellings than the import writes alternatives for (enterprise: 1,024)
// is imported as written, and the report says that other spellings are
// neither counted nor refused, and why no alternative per spelling is
// written. Served, the import limits X-Tier: enterprise and not X-Tier:
// ENTERPRISE, which HAProxy refuses too.
func TestImportHAProxyCaseInsensitiveHeaderValueIsReported(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Tier) -i enterprise }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.SluiceRules) != 1 || len(tr.SluiceRules[0].Headers) != 1 || tr.SluiceRules[0].Headers[0].Value != "enterprise" {
		t.Fatalf("rules %+v, want one matching X-Tier: enterprise", tr.SluiceRules)
	}
	found := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "-i") && strings.Contains(d.Text, "ENTERPRISE") && strings.Contains(d.Text, "neither counted nor refused") && strings.Contains(d.Text, "more spellings than the 64 alternatives") {
			found = true
		}
	}
	if !found {
		t.Errorf("no difference says that -i enterprise also matches ENTERPRISE, which sluice's rule neither counts nor refuses, and that it has too many spellings for a rule of one per spelling: %+v", tr.Differences)
	}
	h := serveImported(t, tr)
	send := func(tier string) int {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Tier", tier)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	n := 0
	for range 25 {
		if send("enterprise") == 200 {
			n++
		}
	}
	if n != 20 {
		t.Errorf("X-Tier: enterprise: %d of 25 admitted, want 20", n)
	}
	if got := send("ENTERPRISE"); got != 200 {
		t.Errorf("X-Tier: ENTERPRISE, which the rule does not match (the difference reported): %d, want 200", got)
	}
}

// TestImportHAProxyCaseSensitiveHeaderValueSaysNothingOfCase: without -i
// HAProxy matches the value exactly, as sluice does.
func TestImportHAProxyCaseSensitiveHeaderValueSaysNothingOfCase(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 20 } { req.hdr(X-Tier) free }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range tr.Differences {
		if strings.Contains(d.Text, "FREE") {
			t.Errorf("a case-sensitive match reported as one in any case: %+v", d)
		}
	}
}

// TestImportedHAProxyCaseInsensitiveHeaderValueCountsEverySpelling: a
// short value matched in any case (-i free: 16 spellings) is one rule
// with an alternative per spelling, so a client that mixes spellings
// counts once, as in HAProxy, and every spelling is refused over the
// limit; the report no longer says a spelling escapes.
func TestImportedHAProxyCaseInsensitiveHeaderValueCountsEverySpelling(t *testing.T) {
	tr, err := migrate.Import("haproxy", `frontend fe
    bind :80
    stick-table type ip size 100k expire 30s store http_req_rate(10s)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 3 } { req.hdr(X-Tier) -i free }
`, "haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	load(t, tr, true)
	h := serveImported(t, tr)
	var got []int
	for _, tier := range []string{"free", "FREE", "Free", "fReE", "free", "pro"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Tier", tier)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if want := []int{200, 200, 200, 429, 429, 200}; !equalInts(got, want) {
		t.Errorf("X-Tier free, FREE, Free, fReE, free, pro: %v, want %v (one count of every spelling, 3 in 10 s)", got, want)
	}
	if reported(tr, "neither counted nor refused") {
		t.Errorf("the report says a spelling escapes the rule: %+v", tr.Differences)
	}
}

// TestHAProxyAnyCaseHeaderAgrees holds the import of a header value
// matched in any case to Debian's haproxy: acme, ACME and Acme are one
// count of an address, refused above 2 a minute; other tenants pass (and
// HAProxy counts them too, so none is sent before an acme request).
func TestHAProxyAnyCaseHeaderAgrees(t *testing.T) {
	t.Parallel()
	targets := startHAProxyTargets(t, `frontend fe
    bind %[1]s
    stick-table type ipv6 size 10k expire 2m store http_req_rate(1m)
    http-request track-sc0 src
    http-request deny deny_status 429 if { sc_http_req_rate(0) gt 2 } { req.hdr(X-Tenant) -i acme }
    default_backend app
backend app
    server up %[2]s
`, okUpstream(t))
	seq := []haproxyRequest{
		{2, "GET", "/x", "acme"}, {2, "GET", "/x", "ACME"}, {2, "GET", "/x", "Acme"}, {2, "GET", "/x", "aCmE"}, {2, "GET", "/x", "other"},
		{3, "GET", "/x", "ACME"}, {3, "GET", "/x", ""},
	}
	want := []int{200, 200, 429, 429, 200,
		200, 200}
	expectSameStatuses(t, targets, seq, want)
}
