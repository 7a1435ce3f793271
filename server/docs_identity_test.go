package server_test

import (
	"strings"
	"testing"
)

// /docs tells clients of API keys only where a key can name a client: a
// key is listed (keys:, keys_file) or identity.unknown_keys is key. Where
// none is listed and unknown_keys is ip (the default), a request with any
// key counts as its address: the page then names no API key, promises no
// quota per key, and its code examples send none.
func TestDocsNameNoAPIKeyWhereNoKeyIsAClient(t *testing.T) {
	const noKeys = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
`
	f := newFixture(t, noKeys)
	// What the limiter does: two keys from one address share its quota.
	for i := range 3 {
		if r := f.do(t, "GET", "/a", "", map[string]string{"X-API-Key": "key-a"}); r.StatusCode != 200 {
			t.Fatalf("key-a's request %d: %d", i, r.StatusCode)
		}
	}
	if r := f.do(t, "GET", "/a", "", map[string]string{"X-API-Key": "key-b"}); r.StatusCode != 429 {
		t.Fatalf("key-b's first request: %d; the fixture does not count keys by address", r.StatusCode)
	}
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for _, never := range []string{"Each key has its own quota", "<strong>API key</strong>", "API_KEY", "X-API-Key", "your API key", "IP address</strong> otherwise"} {
		if i := strings.Index(page, never); i >= 0 {
			t.Errorf("/docs where no key is a client says %q: …%s…", never, page[max(0, i-200):min(len(page), i+100)])
		}
	}
	for _, want := range []string{`<pre id="code-curl">curl --fail --retry 5 --retry-max-time 120 <span class="api-base">`,
		"replace the address with this API's):", "This page does not ask who you are (it is public): pick your plan above."} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs where no key is a client lacks %s", want)
		}
	}
	if i, j := strings.Index(page, `<pre id="code-go">`), strings.Index(page, `<h3 id="code-js-h">`); i < 0 || j < i || strings.Contains(page[i:j], `"os"`) {
		t.Errorf("/docs's Go example imports os (unused without a key) or is missing")
	}

	// With unknown_keys: key, each key is a client of its own.
	own := strings.Replace(noKeys, "identity:\n", "identity:\n  unknown_keys: key\n", 1)
	page = readAll(t, newFixture(t, own).do(t, "GET", "/docs", "", nil))
	for _, want := range []string{"Each key has its own quota", `$API_KEY" <span class="api-base">`} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs with unknown_keys: key lacks %s", want)
		}
	}
	// With keys listed, as before.
	page = readAll(t, newFixture(t, testConfig).do(t, "GET", "/docs", "", nil))
	for _, want := range []string{"Each key has its own quota", "Your plan is the one your API key was issued for.", "IP address</strong> otherwise"} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs with keys listed lacks %s", want)
		}
	}
}
