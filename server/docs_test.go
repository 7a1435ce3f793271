package server_test

import (
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
