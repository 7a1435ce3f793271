package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// globalConfig is frontConfig (3 requests a minute per client) with a
// global limit of 4 a minute and global_status: 503: a request the global
// limit alone refuses is the service's capacity, not its client's quota.
func globalConfig(t *testing.T, denyStatus string) string {
	t.Helper()
	return realtest.Replace(t, "frontConfig", frontConfig(t, denyStatus),
		"response:\n", "response:\n  global_status: 503\n") +
		"global:\n  - {name: everyone, algorithm: fixed-window, quantity: 4, window: 1m}\n"
}

// A refusal by the global limits alone (with global_status: 503) carries
// Sluice-Refusal: temporary-reduced-capacity, as a shed request does, so
// that nginx (deny_status 403) can answer it 503 and not 429; Caddy and
// Traefik (deny_status 429) get the 503 itself. A refusal by the client's
// own limits carries no such header, even when the global one refuses too.
func TestForwardAuthMarksARefusalByGlobalCapacity(t *testing.T) {
	for _, c := range []struct {
		deny       string
		wantGlobal int
		wantOwn    int
	}{
		{"403", 403, 403},
		{"429", 503, 429},
	} {
		t.Run("deny_status "+c.deny, func(t *testing.T) {
			f := newFixture(t, globalConfig(t, c.deny))
			ask := func(client string) (int, string, string) {
				t.Helper()
				r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
					"X-Forwarded-For": client, "X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/search"})
				return r.StatusCode, strings.Join(r.Header.Values("Sluice-Refusal"), ","), readAll(t, r)
			}
			for i := range 3 {
				if status, _, body := ask("198.51.100.1"); status != 200 {
					t.Fatalf("client 1, request %d: %d %s", i+1, status, body)
				}
			}
			if status, _, body := ask("198.51.100.2"); status != 200 {
				t.Fatalf("client 2, request 1: %d %s", status, body)
			}
			status, refusal, body := ask("198.51.100.2")
			if status != c.wantGlobal || refusal != "temporary-reduced-capacity" {
				t.Errorf("refused by the global limit alone: %d Sluice-Refusal %q %s, want %d temporary-reduced-capacity", status, refusal, body, c.wantGlobal)
			}
			// The body says what the header says, under any deny status.
			if !strings.Contains(body, `"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"`) ||
				!strings.Contains(body, fmt.Sprintf(`"status":%d`, c.wantGlobal)) {
				t.Errorf("refused by the global limit alone, the body: %s", body)
			}
			status, refusal, body = ask("198.51.100.1")
			if status != c.wantOwn || refusal != "" {
				t.Errorf("refused by the client's own limit too: %d Sluice-Refusal %q %s, want %d and none", status, refusal, body, c.wantOwn)
			}
			if !strings.Contains(body, "#quota-exceeded") {
				t.Errorf("refused by the client's own limit too, the body: %s", body)
			}
		})
	}
}
