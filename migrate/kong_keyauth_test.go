package migrate_test

import (
	"net/http/httptest"
	"testing"

	"github.com/sluice-dev/sluice/migrate"
)

// TestImportedKongReadsKeyAuthKeyNames: Kong's key-auth plugin reads a
// consumer's key from the headers its key_names lists (apikey when
// unset), so limit_by consumer counts each key sent in X-Api-Key apart;
// the import reads API keys from those headers too, and reports that
// Kong also reads them from the query string (key_in_query, its default).
func TestImportedKongReadsKeyAuthKeyNames(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_names: [x-api-key]}
  - name: rate-limiting
    config: {minute: 1, limit_by: consumer}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	h := serveImported(t, tr)
	for i, c := range []struct {
		key  string
		want int
	}{
		{"key-a", 200},
		{"key-b", 200}, // another consumer's key, from the same address
		{"key-a", 429},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "192.0.2.1:1234"
		r.Header.Set("X-Api-Key", c.key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != c.want {
			t.Errorf("request %d with X-Api-Key %s: %d, want %d", i, c.key, w.Code, c.want)
		}
	}
	if !reported(tr, "query") {
		t.Errorf("no difference says that Kong also reads the key from the query string: %+v", tr.Differences)
	}
}

// TestImportKongKeyAuthRefusalIsReported: Kong's key-auth refuses a request
// without a valid key (401) before any rate limit; sluice authenticates
// nobody, so the import says that a made-up key reaches the upstream.
func TestImportKongKeyAuthRefusalIsReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: key-auth
    config: {key_in_query: false}
  - name: rate-limiting
    config: {minute: 5}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !reported(tr, "401") {
		t.Errorf("no difference says that Kong refused requests without a valid key: %+v", tr.Differences)
	}
}

// TestImportedKongFractionalLimit: Kong's periods are numbers above 0, and
// Kong admits a request while the period's count is below the limit, so
// day: 2.5 admits 3 a day (and month: 0.5 one a month): a fixed window of
// the limit rounded up.
func TestImportedKongFractionalLimit(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {day: 2.5, month: 0.5, limit_by: ip}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/", "", "192.0.2.1", 200},
		{"/", "", "192.0.2.1", 429}, // month 0.5: one a month
		{"/", "", "192.0.2.2", 200},
	})
	tr, err = migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {day: 2.5, limit_by: ip}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	expectStatuses(t, serveImported(t, tr), []sent{
		{"/", "", "192.0.2.1", 200},
		{"/", "", "192.0.2.1", 200},
		{"/", "", "192.0.2.1", 200},
		{"/", "", "192.0.2.1", 429},
	})
}

// TestImportedKongWithoutAuthenticationCountsByAddress: limit_by consumer
// (the default) counts per consumer, and Kong knows a request's consumer
// only from an authentication plugin (key-auth, jwt, openid-connect…);
// without one in the file, every request falls back to its address. A
// client sending made-up API keys, or the upstream's own Bearer tokens, is
// still one client, as in Kong: no fresh quota per key.
func TestImportedKongWithoutAuthenticationCountsByAddress(t *testing.T) {
	for name, src := range map[string]string{
		"the plan's limits": `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 2, policy: local}
`,
		"a rule of a route's plugin": `_format_version: "3.0"
services:
  - name: api
    url: http://api.internal
    routes:
      - {name: api, paths: [/api/]}
      - {name: search, paths: [/search/], plugins: [{name: rate-limiting, config: {minute: 2}}]}
    plugins:
      - name: rate-limiting
        config: {minute: 2}
`,
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := migrate.Import("kong", src, "kong.yaml")
			if err != nil {
				t.Fatal(err)
			}
			h := serveImported(t, tr)
			for _, path := range []string{"/api/", "/search/"} {
				if name == "the plan's limits" && path == "/search/" {
					continue
				}
				for i, c := range []struct {
					key  string
					want int
				}{
					{"key-a", 200},
					{"key-b", 200},
					{"key-c", 429}, // the same address: a third request a minute
				} {
					if got := sendKey(h, path, c.key, "192.0.2.1"); got != c.want {
						t.Errorf("%s: request %d with Apikey %s: %d, want %d", path, i, c.key, got, c.want)
					}
				}
			}
		})
	}
}

// TestImportKongConsumerPluginWithoutAuthenticationIsReported: Kong runs a
// consumer's plugin only for the requests an authentication plugin names
// the consumer of; in a file without one it never ran, while the import's
// consumer plan applies to the consumer's keys: reported.
func TestImportKongConsumerPluginWithoutAuthenticationIsReported(t *testing.T) {
	tr, err := migrate.Import("kong", `_format_version: "3.0"
plugins:
  - name: rate-limiting
    config: {minute: 5}
consumers:
  - username: acme
    keyauth_credentials: [{key: acme-key}]
    plugins:
      - name: rate-limiting
        config: {minute: 100}
`, "kong.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !hasDifference(tr, false, "no authentication plugin") {
		t.Errorf("not reported that Kong never ran the consumer's plugin: %+v", tr.Differences)
	}
}
