package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// dashboardConfig limits every client to one request a minute; k1 is a
// named key (demo-free-key), the second key (unnamed-key) has no name.
const dashboardConfig = `
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 1, window: 1m}
default_plan: free
keys:
  - {name: k1, sha256: 9f8cfdb17116bf0e2a44e071454f25594cb9b8737bf331e6a2f0b30550572f29, plan: free}
  - {sha256: %s, plan: free}
`

func newDashboardServer(t *testing.T) *Server {
	t.Helper()
	sum := sha256.Sum256([]byte("unnamed-key"))
	cfg, err := config.Parse("sluice.yaml", fmt.Appendf(nil, dashboardConfig, hex.EncodeToString(sum[:])))
	if err != nil {
		t.Fatal(err)
	}
	st := memory.New(memory.WithSweepInterval(0))
	t.Cleanup(func() { st.Close() })
	s, err := New(Options{Config: cfg, Store: st, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// limited sends requests through s's limiter from addr (with apiKey when
// not empty) until one is refused.
func limited(t *testing.T, s *Server, addr, apiKey string) {
	t.Helper()
	for range 3 {
		r := httptest.NewRequest("GET", "/api/items", nil)
		r.RemoteAddr = addr + ":40000"
		if apiKey != "" {
			r.Header.Set("X-Api-Key", apiKey)
		}
		w := httptest.NewRecorder()
		s.protect(w, r)
		if w.Code == http.StatusTooManyRequests {
			return
		}
	}
	t.Fatalf("%s %q never refused", addr, apiKey)
}

// topClients returns the dashboard's data as JSON text and its top list.
func topClients(t *testing.T, s *Server) (string, []topRow) {
	t.Helper()
	w := httptest.NewRecorder()
	s.handleDashboardData(w, httptest.NewRequest("GET", "/dashboard/data", nil))
	var d dashboardData
	if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
		t.Fatalf("%v: %s", err, w.Body)
	}
	return w.Body.String(), d.TopLimited
}

// The dashboard shows a configured key by its name, and any other client
// by a pseudonym that is not a hash of its subject: trying every address
// of the client's /24 finds nothing in the data.
func TestDashboardShowsKeyNamesAndPseudonyms(t *testing.T) {
	s := newDashboardServer(t)
	limited(t, s, "203.0.113.7", "")
	limited(t, s, "198.51.100.1", "demo-free-key")
	limited(t, s, "198.51.100.2", "unnamed-key")
	data, top := topClients(t, s)
	clients := map[string]bool{}
	for _, e := range top {
		clients[e.Client] = true
	}
	if len(top) != 3 || !clients[httplimit.KindAPIKey+":k1"] {
		t.Errorf("top %+v, want 3 clients, one of them %s:k1", top, httplimit.KindAPIKey)
	}
	for c := range clients {
		kind, name, _ := strings.Cut(c, ":")
		if c != httplimit.KindAPIKey+":k1" && (len(name) != 12 || (kind != httplimit.KindIP && kind != httplimit.KindAPIKey)) {
			t.Errorf("client %q: want a kind and 12 hex digits", c)
		}
	}
	for _, secret := range []string{"203.0.113.7", "demo-free-key", "unnamed-key"} {
		if strings.Contains(data, secret) {
			t.Errorf("the dashboard data shows %q: %s", secret, data)
		}
	}
	// Whoever guesses the subject's form cannot confirm a guess.
	for i := range 256 {
		ip := fmt.Sprintf("203.0.113.%d", i)
		for _, subject := range []string{ip, "ip:" + ip, "ip:" + ip + "/32"} {
			sum := sha256.Sum256([]byte(subject))
			if h := hex.EncodeToString(sum[:])[:8]; strings.Contains(data, h) {
				t.Errorf("the data holds %s, a prefix of sha256(%q): %s", h, subject, data)
			}
		}
	}
	for _, key := range []string{"unnamed-key"} {
		sum := sha256.Sum256([]byte(key))
		subject := sha256.Sum256([]byte("key:" + hex.EncodeToString(sum[:])))
		for _, h := range []string{hex.EncodeToString(sum[:])[:8], hex.EncodeToString(subject[:])[:8]} {
			if strings.Contains(data, h) {
				t.Errorf("the data holds %s, a hash of the key", h)
			}
		}
	}
}

// A pseudonym is stable within one server and differs between servers (a
// key of each process's own).
func TestDashboardPseudonymsAreKeyedPerServer(t *testing.T) {
	id := httplimit.Identity{Kind: httplimit.KindIP, Subject: "ip:203.0.113.7", Plan: &httplimit.Plan{Name: "free"}}
	a, b := newStats(time.Now, nil), newStats(time.Now, nil)
	if a.displayClient(id) != a.displayClient(id) {
		t.Error("one server shows two pseudonyms for one client")
	}
	if a.displayClient(id) == b.displayClient(id) {
		t.Errorf("two servers show the same pseudonym %q for one client", a.displayClient(id))
	}
	other := id
	other.Subject = "ip:203.0.113.8"
	if a.displayClient(id) == a.displayClient(other) {
		t.Error("two clients share a pseudonym")
	}

	// Through two real servers: the same client, two pseudonyms; the
	// named key, one name.
	s1, s2 := newDashboardServer(t), newDashboardServer(t)
	for _, s := range []*Server{s1, s2} {
		limited(t, s, "203.0.113.7", "")
	}
	_, top1 := topClients(t, s1)
	_, top2 := topClients(t, s2)
	if len(top1) != 1 || len(top2) != 1 || top1[0].Client == top2[0].Client {
		t.Errorf("two servers: %+v and %+v, want one client each under different pseudonyms", top1, top2)
	}
	limited(t, s1, "203.0.113.7", "") // refused again: the same entry
	if _, again := topClients(t, s1); len(again) != 1 || again[0].Client != top1[0].Client || again[0].Refused != top1[0].Refused+1 {
		t.Errorf("the same client again: %+v, then %+v", top1, again)
	}
}
