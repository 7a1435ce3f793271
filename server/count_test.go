package server_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
)

// countConfig limits /login to 2 failed requests a minute per client
// (count: failures) beside a plan of 100 a minute that counts every
// request.
const countConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: sliding-window-log, quantity: 100, window: 1m}
rules:
  - name: logins
    match: {paths: ["/login"]}
    count: failures
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}]
`

// TestCountOnlyFailuresThroughTheProxy: through the reverse proxy, on
// memory and Redis, counting only failures refunds successes exactly: any
// number of logins the upstream answers 200 leave the rule's quota full,
// while the plan counts each; once the upstream fails (502), two failures
// spend the quota and the third login is refused without reaching it.
// /docs says how the rule counts.
func TestCountOnlyFailuresThroughTheProxy(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, countConfig, kind)
		for i := range 5 {
			r := f.do(t, "POST", "/login", "", nil)
			readAll(t, r)
			// The headers are written before the upstream answers: the
			// request's own unit is still counted then.
			if want := fmt.Sprintf(`"per-minute";r=%d;t=60, "logins.per-minute";r=1;t=60`, 99-i); r.StatusCode != 200 || r.Header.Get("RateLimit") != want {
				t.Fatalf("login %d: %d, RateLimit %q, want 200 and %q", i, r.StatusCode, r.Header.Get("RateLimit"), want)
			}
		}
		if n := f.hits.Load(); n != 5 {
			t.Fatalf("upstream saw %d logins, want 5", n)
		}

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		if err := os.WriteFile(f.file, []byte("upstream: "+dead+"\n"+countConfig+testAdmin), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := f.srv.Reload(); err != nil {
			t.Fatal(err)
		}
		var got []int
		for range 3 {
			r := f.do(t, "POST", "/login", "", nil)
			readAll(t, r)
			got = append(got, r.StatusCode)
		}
		if want := "[502 502 429]"; fmt.Sprint(got) != want {
			t.Fatalf("logins with the upstream down: %v, want %v", got, want)
		}

		docs := readAll(t, f.do(t, "GET", "/docs", "", nil))
		if want := "<code>logins.per-minute</code> counts only requests answered with an error (status 400 or above)"; !strings.Contains(docs, want) {
			t.Errorf("/docs lacks %q", want)
		}
		f.noStoreErrors(t)
	})
}
