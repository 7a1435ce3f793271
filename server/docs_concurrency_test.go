package server_test

import (
	"strings"
	"testing"
)

// A concurrency limit has no window: its window: is the lease after which
// a slot never released frees (docs/headers.md). /docs tells it as the
// requests a client may have in progress at once, and how a slot frees —
// never as a rate ("2 requests per 30s"), which would have a client pace
// itself to one request every 15 s, or send 2 and expect more after 30 s
// while both are still in progress.
func TestDocsTellsAConcurrencyLimitAsRequestsAtOnce(t *testing.T) {
	f := newFixture(t, `
plans:
  free:
    limits:
      - {name: in-flight, algorithm: concurrency, quantity: 2, window: 30s}
`)
	page := readAll(t, f.do(t, "GET", "/docs", "", nil))
	i := strings.Index(page, `<code>in-flight</code>`)
	if i < 0 {
		t.Fatal("/docs has no row for in-flight")
	}
	row, _, _ := strings.Cut(page[i:], "</tr>")
	for _, want := range []string{"<td>2 requests in progress at once</td>",
		"<td>a slot frees when a request ends; one never released frees after 30s</td>"} {
		if !strings.Contains(row, want) {
			t.Errorf("/docs's row of a concurrency limit (2 at once, lease 30s) lacks %s: %s", want, row)
		}
	}
	if strings.Contains(row, " per 30s") {
		t.Errorf("/docs tells a concurrency limit as a rate: %s", row)
	}
}
