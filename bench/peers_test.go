package bench

import (
	"net/http"
	"strings"
	"testing"
)

// TestRedisPeersAdmit checks that every Redis peer, built for 100 per
// second, admits about its burst of 100 for one key, then refuses, and
// admits a fresh key: the Redis benchmarks compare limiters that really
// limit. It needs redis-server.
func TestRedisPeersAdmit(t *testing.T) {
	srv, err := StartRedis()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	for _, p := range RedisPeers {
		t.Run(p.Name, func(t *testing.T) {
			const rate = 100
			inst, err := p.New(srv.Addr, rate)
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Close()
			// Window-based peers may refill their whole burst if a window
			// boundary falls inside the loop: allow a retry for that.
			for attempt := range 3 {
				dec := inst.Worker()
				key := "admit-" + p.Name + "-" + string(rune('a'+attempt))
				admitted := 0
				for range 2 * rate {
					ok, err := dec(key)
					if err != nil {
						t.Fatal(err)
					}
					if ok {
						admitted++
					}
				}
				if ok, err := dec("fresh-" + key); err != nil || !ok {
					t.Fatalf("a fresh key: %v %v", ok, err)
				}
				// Calls take tens of µs: a unit or two refill meanwhile.
				if admitted >= rate-1 && admitted <= rate+rate/10 {
					if msg := inst.Check(); msg != "" {
						t.Fatal(msg)
					}
					return
				}
				t.Logf("attempt %d: admitted %d of %d", attempt, admitted, 2*rate)
			}
			t.Fatalf("%s does not limit to a burst of %d", p.Name, rate)
		})
	}
}

// TestHTTPPeersLimit checks that every middleware admits a key's requests
// up to the limit and then refuses them, so that the middleware benchmark
// compares middleware that really limit.
func TestHTTPPeersLimit(t *testing.T) {
	keys := APIKeys(10)
	for _, p := range HTTPPeers {
		if p.Name == "bare" {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			h, closeFn := p.New(keys, BareHandler)
			defer closeFn()
			r, _ := http.NewRequest(http.MethodGet, "http://api.example/v1/items", nil)
			r.RemoteAddr = "192.0.2.10:41234"
			r.Header.Set(APIKeyHeader, keys[3])
			r.Header.Set(TenantHeader, "acme")
			w := NewDiscardWriter()
			admitted, refused := 0, 0
			for range 2 * Rate {
				w.Reset()
				h.ServeHTTP(w, r)
				switch w.Status {
				case http.StatusOK:
					admitted++
				case http.StatusTooManyRequests:
					refused++
				default:
					t.Fatalf("status %d", w.Status)
				}
			}
			if admitted < Rate-1 || refused == 0 {
				t.Fatalf("admitted %d, refused %d of %d with a limit of %d", admitted, refused, 2*Rate, Rate)
			}
		})
	}
}

// The row with rules checks all five limits: the plan's three and one of
// each rule, each named in the RateLimit header.
func TestSluiceRulesRowChecksFiveLimits(t *testing.T) {
	keys := APIKeys(3)
	h, closeFn := newSluiceHTTP(keys, BareHandler, 3, true)
	defer closeFn()
	r, _ := http.NewRequest(http.MethodGet, "http://api.example/v1/items?page=2", nil)
	r.Header.Set(APIKeyHeader, keys[1])
	r.Header.Set(TenantHeader, "acme")
	w := NewDiscardWriter()
	h.ServeHTTP(w, r)
	got := w.H.Get("RateLimit")
	for _, name := range []string{"per-second", "per-minute", "per-day", "items.per-minute", "tenants.per-second"} {
		if !strings.Contains(got, `"`+name+`";r=`) {
			t.Errorf("RateLimit %q has no item %q", got, name)
		}
	}
	if n := strings.Count(got, ";r="); w.Status != http.StatusOK || n != 5 {
		t.Errorf("status %d, %d items in RateLimit %q, want 200 and 5", w.Status, n, got)
	}
}
