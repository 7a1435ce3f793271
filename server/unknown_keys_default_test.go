package server_test

import (
	"fmt"
	"strings"
	"testing"
)

// madeUpKeysConfig lists no keys and sets no unknown_keys: 5 requests a
// minute for every client.
const madeUpKeysConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 5, window: 1m}
`

// A configuration that lists no keys limits a made-up API key as its
// client's address: 20 requests from one address, each with a key of its
// own, get that address's 5 a minute through the proxy, forward-auth and
// the decision API (with ip); under unknown_keys: key each key is a client
// of its own.
func TestMadeUpKeysMintNoQuotaByDefault(t *testing.T) {
	for _, c := range []struct {
		name, cfg string
		want      int
	}{
		{"default", madeUpKeysConfig, 5},
		{"unknown_keys key", strings.Replace(madeUpKeysConfig, "identity:\n", "identity:\n  unknown_keys: key\n", 1), 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, c.cfg)
			count := func(send func(i int) int) int {
				passed := 0
				for i := range 20 {
					if send(i) == 200 {
						passed++
					}
				}
				return passed
			}
			proxy := count(func(i int) int {
				h := map[string]string{"X-Forwarded-For": "198.51.100.40", "X-API-Key": fmt.Sprintf("made-up-%d", i)}
				if i%2 == 1 {
					h = map[string]string{"X-Forwarded-For": "198.51.100.40", "Authorization": fmt.Sprintf("Bearer made-up-%d", i)}
				}
				return f.do(t, "GET", "/api/search", "", h).StatusCode
			})
			if proxy != c.want {
				t.Errorf("proxy: 20 made-up keys from one address: %d passed, want %d", proxy, c.want)
			}
			fa := count(func(i int) int {
				return f.do(t, "GET", "/v1/forward-auth", "", map[string]string{
					"X-Forwarded-For": "198.51.100.41", "X-Forwarded-Uri": "/api/search", "X-Forwarded-Method": "GET",
					"X-API-Key": fmt.Sprintf("fa-made-up-%d", i)}).StatusCode
			})
			if fa != c.want {
				t.Errorf("forward-auth: 20 made-up keys from one address: %d passed, want %d", fa, c.want)
			}
			api := count(func(i int) int {
				r := f.do(t, "POST", "/v1/check", fmt.Sprintf(`{"api_key":"api-made-up-%d","ip":"198.51.100.42"}`, i), nil)
				b := readAll(t, r)
				if r.StatusCode != 200 {
					t.Fatalf("decision API: %d %s", r.StatusCode, b)
				}
				if strings.Contains(b, `"allowed":true`) {
					return 200
				}
				return 429
			})
			if api != c.want {
				t.Errorf("decision API: 20 made-up keys with one ip: %d allowed, want %d", api, c.want)
			}
		})
	}
	// Without ip the decision API's caller vouches for the key: each is a
	// client of its own, whatever unknown_keys.
	f := newFixture(t, madeUpKeysConfig)
	allowed := 0
	for i := range 20 {
		r := f.do(t, "POST", "/v1/check", fmt.Sprintf(`{"api_key":"vouched-%d"}`, i), nil)
		if b := readAll(t, r); strings.Contains(b, `"allowed":true`) {
			allowed++
		}
	}
	if allowed != 20 {
		t.Errorf("decision API: 20 keys without ip: %d allowed, want 20", allowed)
	}
}
