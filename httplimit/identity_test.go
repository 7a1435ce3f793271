package httplimit_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// identityConfig limits each client to one request a minute and trusts the
// proxies in 10.0.0.0/8, so that who got the quota shows who the client was.
const identityConfig = `
identity:
  trusted_proxies: [10.0.0.0/8, "2001:db8:ffff::/48"]
  user_header: X-User-ID
  plan_header: X-Plan
plans:
  anonymous:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
  free:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
  big:
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}]
default_plan: free
anonymous_plan: anonymous
`

// keyClientsConfig is identityConfig with every API key a client of its
// own (unknown_keys: key).
var keyClientsConfig = strings.Replace(identityConfig, "  plan_header: X-Plan\n", "  plan_header: X-Plan\n  unknown_keys: key\n", 1)

// sameClient reports whether b is limited as the same client as a: after a
// spends the single request, b is refused.
func sameClient(t *testing.T, a, b req) bool {
	t.Helper()
	return sameClientUnder(t, identityConfig, a, b)
}

// sameClientUnder is sameClient under the configuration text.
func sameClientUnder(t *testing.T, text string, a, b req) bool {
	t.Helper()
	h, _ := setup(t, text, noon)
	if w := do(h, a); w.Code != 200 {
		t.Fatalf("first request refused: %d", w.Code)
	}
	return do(h, b).Code == 429
}

func TestSpoofedForwardingHeadersFromUntrustedPeersChangeNothing(t *testing.T) {
	attacker := "203.0.113.7:5555"
	for _, hdr := range []map[string]string{
		{"X-Forwarded-For": "198.51.100.1"},
		{"X-Forwarded-For": "198.51.100.2, 10.0.0.1"},
		{"Forwarded": "for=198.51.100.3"},
		{"Forwarded": `for="[2001:db8::1]:80"`},
		{"X-User-ID": "someone-else"},
		{"X-Plan": "big"},
	} {
		if !sameClient(t, req{remote: attacker}, req{remote: attacker, header: hdr}) {
			t.Errorf("headers %v from an untrusted peer gave it a fresh quota", hdr)
		}
	}
}

func TestTrustedProxyRightmostUntrustedHopIsTheClient(t *testing.T) {
	proxy := "10.1.2.3:40000"
	cases := []struct {
		name string
		a, b map[string]string
		same bool
	}{
		{"X-Forwarded-For: clients told apart", map[string]string{"X-Forwarded-For": "198.51.100.1"},
			map[string]string{"X-Forwarded-For": "198.51.100.2"}, false},
		{"a spoofed leftmost hop is ignored", map[string]string{"X-Forwarded-For": "198.51.100.1"},
			map[string]string{"X-Forwarded-For": "1.2.3.4, 198.51.100.1"}, true},
		{"trusted hops are skipped", map[string]string{"X-Forwarded-For": "198.51.100.1, 10.9.9.9"},
			map[string]string{"X-Forwarded-For": "198.51.100.1"}, true},
		{"a client's own Forwarded header is not believed", map[string]string{"X-Forwarded-For": "198.51.100.1", "Forwarded": "for=1.2.3.4"},
			map[string]string{"X-Forwarded-For": "198.51.100.1", "Forwarded": "for=5.6.7.8"}, true},
		{"IPv6 clients are grouped by /64", map[string]string{"X-Forwarded-For": "[2001:db8:1:2::1]:443"},
			map[string]string{"X-Forwarded-For": "2001:db8:1:2:ffff::9"}, true},
		{"other /64s are other clients", map[string]string{"X-Forwarded-For": "2001:db8:1:2::1"},
			map[string]string{"X-Forwarded-For": "2001:db8:1:3::1"}, false},
		{"an unparseable hop stops the walk at the proxy", map[string]string{"X-Forwarded-For": "garbage"},
			map[string]string{"X-Forwarded-For": "unknown"}, true},
		{"the user header is believed from a proxy", map[string]string{"X-User-ID": "alice"},
			map[string]string{"X-User-ID": "bob"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := sameClient(t, req{remote: proxy, header: c.a}, req{remote: proxy, header: c.b}); got != c.same {
				t.Errorf("same client = %v, want %v", got, c.same)
			}
		})
	}
}

func TestIdentityPrecedenceAndPlans(t *testing.T) {
	proxy := "10.1.2.3:40000"
	// An API key outranks the user header: two users with one key share it.
	if !sameClientUnder(t, keyClientsConfig, req{remote: proxy, header: map[string]string{"Authorization": "Bearer k1", "X-User-ID": "alice"}},
		req{remote: proxy, header: map[string]string{"X-API-Key": "k1", "X-User-ID": "bob"}}) {
		t.Error("an API key did not outrank the user id")
	}
	// The plan header from a trusted proxy picks the plan.
	h, _ := setup(t, identityConfig, noon)
	big := map[string]string{"X-User-ID": "carol", "X-Plan": "big"}
	for i := range 5 {
		if w := do(h, req{remote: proxy, header: big}); w.Code != 200 {
			t.Fatalf("request %d on the big plan refused", i)
		}
	}
}

func TestRawAPIKeysNeverBecomeSubjects(t *testing.T) {
	cfg, err := config.Parse("t.yaml", []byte(keyClientsConfig))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httplimit.New(sluice.NewLimiter(memory.New(memory.WithSweepInterval(0))), cfg.HTTPLimitOptions())
	if err != nil {
		t.Fatal(err)
	}
	secret := "sk_live_" + strings.Repeat("x", 30)
	for _, h := range []map[string]string{{"Authorization": "Bearer " + secret}, {"X-API-Key": secret}} {
		r := httptest.NewRequest("GET", "/", nil)
		for k, v := range h {
			r.Header.Set(k, v)
		}
		res, err := mw.Decide(r)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(secret))
		if want := "key:" + hex.EncodeToString(sum[:]); res.Identity.Subject != want || res.Identity.Kind != httplimit.KindAPIKey {
			t.Errorf("subject %q, want %q", res.Identity.Subject, want)
		}
		for _, c := range res.Checks {
			if strings.Contains(c.Key, secret) {
				t.Errorf("store key %q holds the raw API key", c.Key)
			}
		}
		mw.Discard(res)
	}
}

func TestForwardedHeaderWhenConfigured(t *testing.T) {
	cfg := strings.Replace(identityConfig, "  user_header:", "  forwarded_header: forwarded\n  user_header:", 1)
	h, _ := setup(t, cfg, noon)
	proxy := "10.1.2.3:40000"
	if w := do(h, req{remote: proxy, header: map[string]string{"Forwarded": `for=198.51.100.1;proto=https, for=10.0.0.2`}}); w.Code != 200 {
		t.Fatal(w.Code)
	}
	if w := do(h, req{remote: proxy, header: map[string]string{"Forwarded": `for="198.51.100.1:5000"`, "X-Forwarded-For": "9.9.9.9"}}); w.Code != 429 {
		t.Errorf("the same Forwarded client was not recognised: %d", w.Code)
	}
	if w := do(h, req{remote: proxy, header: map[string]string{"Forwarded": `for="[2001:db8:1:2::1]"`}}); w.Code != 200 {
		t.Errorf("another client: %d", w.Code)
	}
}
