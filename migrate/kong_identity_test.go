package migrate_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportKongKeyAuthAnonymousConsumerIsReported: key-auth's
// config.anonymous names the consumer Kong gives every request without a
// valid key; Kong runs that consumer's rate-limiting plugin on them, one
// count for all (limit_by consumer). sluice's anonymous_plan is the
// imported plan, counted per address, which the import cannot change: the
// report must say so (not Same), naming the consumer and what to do.
func TestImportKongKeyAuthAnonymousConsumerIsReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false, anonymous: guest}
  - {name: rate-limiting, config: {minute: 100}}
consumers:
  - username: guest
    plugins: [{name: rate-limiting, config: {minute: 2}}]
  - username: acme
    keyauth_credentials: [{key: acme-secret}]
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "config.anonymous") && strings.Contains(d.Text, "consumer guest") && strings.Contains(d.Text, "anonymous_plan") {
			reported = true
		}
	}
	if !reported {
		t.Error("no difference says that Kong gives keyless requests consumer guest (config.anonymous) and sluice its anonymous_plan")
	}
}

// TestImportedKongConsumerFallbackIsTheWholeIPv6Address: limit_by
// consumer falls back to kong.client.get_forwarded_ip(), the whole
// address, for a request without a consumer; the import must keep IPv6
// addresses whole (ipv6_prefix: 128), so two clients of one /64 without a
// key count apart. So must limit_by header without the header.
func TestImportedKongConsumerFallbackIsTheWholeIPv6Address(t *testing.T) {
	for _, config := range []string{"{minute: 1}", "{minute: 1, limit_by: header, header_name: X-Tenant}"} {
		tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - {name: rate-limiting, config: `+config+`}
`, "kong.yaml")
		if err != nil {
			t.Fatal(err)
		}
		h := serveImported(t, tr)
		send := func(addr string) int {
			r := httptest.NewRequest("GET", "/x", nil)
			r.RemoteAddr = "[" + addr + "]:1234"
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			return w.Code
		}
		if a, b, c := send("2001:db8::1"), send("2001:db8::2"), send("2001:db8::1"); a != 200 || b != 200 || c != 429 {
			t.Errorf("%s: 2001:db8::1, 2001:db8::2, 2001:db8::1 without a key: %d, %d, %d; want 200, 200, 429 (each address apart)", config, a, b, c)
		}
	}
}

// TestImportKongBasicAuthConsumersAreReported: with basic-auth naming the
// consumer, Kong's limit_by consumer counts each user apart; sluice reads
// no client from a user and password, so two users behind one address
// share one count. The report must say so (not Same), naming basic-auth.
func TestImportKongBasicAuthConsumersAreReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: basic-auth
  - {name: rate-limiting, config: {minute: 1}}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reported := false
	for _, d := range tr.Differences {
		if !d.Same && strings.Contains(d.Text, "basic-auth") && strings.Contains(d.Text, "address") {
			reported = true
		}
	}
	if !reported {
		t.Error("no difference says that basic-auth's consumers count by their address in sluice")
		for _, d := range tr.Differences {
			t.Logf("%v %s: %s", d.Same, d.Where, d.Text)
		}
	}
}
