package httplimit_test

import (
	"strings"
	"testing"
	"time"
)

// A refusal offers the plan's upgrade only when the plan it names allows
// more of the limit that refused: not for a rule's limit or a global limit,
// which every plan shares, nor for a plan limit the upgrade keeps as it is.
func TestRefusalOffersTheUpgradeOnlyWhereItAllowsMore(t *testing.T) {
	const cfg = `
identity: {unknown_keys: ip}
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 2, window: 1m}
      - {name: per-hour, algorithm: fixed-window, quantity: 3, window: 1h}
    upgrade: {plan: pro, url: "https://example.com/pricing"}
  pro:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 20, window: 1m}
      - {name: per-hour, algorithm: fixed-window, quantity: 3, window: 1h}
default_plan: free
anonymous_plan: free
global:
  - {name: global, algorithm: fixed-window, quantity: 1000, window: 1m}
rules:
  - name: logins
    match: {paths: ["/login"]}
    key: [ip]
    limits: [{name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}]
`
	for _, c := range []struct {
		name, path, remote, violated string
		offered                      bool
	}{
		{"a plan limit the upgrade raises", "/api/a", "192.0.2.1:1", "per-minute", true},
		{"a plan limit the upgrade keeps", "/api/b", "192.0.2.2:1", "per-hour", false},
		{"a rule's limit", "/login", "192.0.2.3:1", "logins.per-minute", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, clock := setup(t, cfg, noon)
			w := do(h, req{path: c.path, remote: c.remote})
			for i := 0; w.Code == 200 && i < 10; i++ {
				if c.violated == "per-hour" {
					clock.Advance(61 * time.Second) // past the minute, within the hour
				}
				w = do(h, req{path: c.path, remote: c.remote})
			}
			if w.Code != 429 {
				t.Fatalf("never refused: %d", w.Code)
			}
			p := decodeProblem(t, w.Body.String())
			if len(p.ViolatedPolicies) != 1 || p.ViolatedPolicies[0] != c.violated {
				t.Fatalf("violated %v, want [%s]", p.ViolatedPolicies, c.violated)
			}
			said := strings.Contains(p.Detail, "pro plan allows more")
			if offered := p.Upgrade != nil; offered != c.offered || said != c.offered {
				t.Errorf("upgrade %+v, detail %q; want the upgrade offered: %v", p.Upgrade, p.Detail, c.offered)
			}
		})
	}
}

// A refusal by several limits offers the upgrade only when the plan it
// names allows more of every one of them: a client refused by its plan's
// per-minute and by the global limit at once would be refused on pro too.
func TestRefusalOffersNoUpgradeWhenAnotherLimitRefusesToo(t *testing.T) {
	const cfg = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}
    upgrade: {plan: pro, url: "https://example.com/pricing"}
  pro:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 20, window: 1m}
default_plan: free
global:
  - {name: global, algorithm: fixed-window, quantity: 1, window: 1m}
`
	h, _ := setup(t, cfg, noon)
	do(h, req{remote: "192.0.2.1:1"})
	w := do(h, req{remote: "192.0.2.1:1"})
	p := decodeProblem(t, w.Body.String())
	if w.Code != 429 || len(p.ViolatedPolicies) != 2 {
		t.Fatalf("%d, violated %v; want 429 by per-minute and global", w.Code, p.ViolatedPolicies)
	}
	if p.Upgrade != nil || strings.Contains(p.Detail, "pro plan allows more") {
		t.Errorf("upgrade %+v, detail %q; want none: the global limit refuses on pro too", p.Upgrade, p.Detail)
	}
}
