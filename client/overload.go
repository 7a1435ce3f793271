package client

import (
	"strings"
	"time"
)

// A 503 (Service Unavailable) with Retry-After says that the server is
// short of capacity (sluice's degradation sheds load so, with a problem
// of type temporary-reduced-capacity), not that one partition's quota is
// spent: every partition of its host waits it out, those the Transport
// meets after it too. A 429's Retry-After concerns the quota of the
// partition that met it, and holds that partition alone.

// holdServer holds every partition of server (a hostKey) until until:
// those the Transport remembers, and, through t.overloads, those it makes
// before then.
func (t *Transport) holdServer(server string, until time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if t.overloads == nil {
		t.overloads = map[string]time.Time{}
	}
	for k, u := range t.overloads {
		if !u.After(now) {
			delete(t.overloads, k)
		}
	}
	if _, ok := t.overloads[server]; !ok && len(t.overloads) >= maxHosts {
		// As many servers shed load at once as a Transport remembers hosts:
		// the one whose hold ends first makes room.
		var first string
		for k, u := range t.overloads {
			if first == "" || u.Before(t.overloads[first]) {
				first = k
			}
		}
		delete(t.overloads, first)
	}
	t.overloads[server] = later(t.overloads[server], until)
	for k, h := range t.hosts {
		if k == server || strings.HasPrefix(k, server+" ") {
			h.mu.Lock()
			h.holdUntil = later(h.holdUntil, until)
			h.mu.Unlock()
		}
	}
}
