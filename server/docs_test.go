package server_test

import (
	"os"
	"strings"
	"testing"
)

// A plan that limits requests in progress is told what its qu parameter
// means, and its example policy has it.
func TestDocsExplainsConcurrencyLimits(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: 2, window: 30s}
      - {name: per-minute, algorithm: fixed-window, quantity: 3, window: 1m}
`)
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for _, want := range []string{`<dt><code>qu</code></dt>`, `&#34;in-flight&#34;;q=2;qu=&#34;concurrent-requests&#34;`} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %s", want)
		}
	}
	plain := newFixture(t, testConfig)
	if page := readAll(t, plain.do(t, "GET", "/docs", "", nil)); strings.Contains(page, `<dt><code>qu</code></dt>`) {
		t.Error("/docs explains qu to a configuration without a concurrency limit")
	}
}

// Rules are told as the requests they match, what those are counted per
// (and the requests whose key lacks a value), and their limits under the names the headers give them, in units where
// the requests' costs count (uploads: the free plan's costs) and requests
// where the rule sets a cost of 1 (reports); a limit the headers leave out
// says so.
func TestDocsTellsRules(t *testing.T) {
	rules, err := os.ReadFile("../examples/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, string(rules)+"\nresponse:\n  hide: [search]\n")
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	for _, want := range []string{
		`<code>POST, PUT /v1/tenants/{tenant}/uploads, /v1/tenants/{tenant}/uploads/{name...} except /v1/tenants/{tenant}/uploads/drafts/{name...}</code></td><td>{tenant} of the path</td><td><code>uploads.per-minute</code></td><td>10 units per 1m`,
		`<td>value of X-Tenant; requests without it: per client address</td><td><code>search.per-second</code> <span class="muted">(not in the headers)</span>`,
		`<code>POST /v1/reports on api.example.com, *.api.example.com with Content-Type: application/json</code></td><td>all clients together</td><td><code>reports.per-minute</code></td><td>30 requests per 1m`,
		`<code>POST /v1/exports</code></td><td>client (API key, user or address)</td><td><code>exports.per-hour</code>`,
		`<code>POST /v1/login</code></td><td>form field username of the request; requests without it: per client address</td><td><code>logins.per-minute</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/docs lacks %s", want)
		}
	}
	// The penalty box is told, with its figures and problem type.
	if !strings.Contains(page, `<p id="penalty">`) || !strings.Contains(page, "after 20 refused requests\nwithin 1m, every request of yours is refused for 10m") ||
		!strings.Contains(page, "<code>https://github.com/sluice-dev/sluice/blob/main/docs/rules.md#penalty-box</code>") {
		t.Errorf("/docs does not tell the penalty box")
	}
	if plain := readAll(t, newFixture(t, testConfig).do(t, "GET", "/docs", "", nil)); strings.Contains(plain, `id="penalty"`) {
		t.Errorf("/docs of a configuration without a penalty box tells one")
	}
	// The pro plan's page leaves out the rule of the free plan's clients.
	pro := readAll(t, f.do(t, "GET", "/docs?plan=pro", "", nil))
	if !strings.Contains(pro, "<code>reports.per-minute</code>") || strings.Contains(pro, "exports.per-hour") {
		t.Errorf("the pro plan's /docs should list reports and not exports (a rule of the free plan):\n%s", pro)
	}
}
