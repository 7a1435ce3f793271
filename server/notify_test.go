package server_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/server"
)

// hookReceiver is a webhook endpoint that records what it is posted and
// fails the first fail posts with a 503.
type hookReceiver struct {
	mu     sync.Mutex
	bodies []string
	sigs   []string
	fail   int
	posts  int
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.posts++
	if h.fail > 0 {
		h.fail--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	h.bodies, h.sigs = append(h.bodies, string(b)), append(h.sigs, r.Header.Get("Sluice-Signature"))
}

// counts returns the posts received and the notifications recorded.
func (h *hookReceiver) counts() (posts, bodies int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.posts, len(h.bodies)
}

// waitFor returns the first n bodies received, or fails after 10 s.
func (h *hookReceiver) waitFor(t *testing.T, n int) ([]string, []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h.mu.Lock()
		if len(h.bodies) >= n {
			b, s := append([]string(nil), h.bodies...), append([]string(nil), h.sigs...)
			h.mu.Unlock()
			return b, s
		}
		h.mu.Unlock()
	}
	_, got := h.counts()
	t.Fatalf("received %d notifications, want %d", got, n)
	return nil, nil
}

// notifyConfig is testConfig (free: 3 a minute, key k1) telling hook of
// the minute's quota half and wholly used, signed with secret.
func notifyConfig(t *testing.T, hook, secret string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "notify.secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return testConfig + "notify:\n  url: " + hook + "\n  secret_file: " + file + "\n  at: [50, 100]\n  limits: [per-minute]\n"
}

// TestNotifyTellsAQuotasUseOncePerWindow: on memory and Redis, a client
// that uses half, then all of its minute is told once each, signed; its
// refusals tell nothing more; the next minute tells afresh.
func TestNotifyTellsAQuotasUseOncePerWindow(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		hook := &hookReceiver{}
		srv := httptest.NewServer(hook)
		defer srv.Close()
		f := newFixture(t, notifyConfig(t, srv.URL, "s3cret"), kind)
		key := map[string]string{"X-API-Key": "demo-free-key"}
		for i := range 5 { // 3 admitted, 2 refused
			f.do(t, "GET", "/api/search", "", key)
			if i == 0 {
				time.Sleep(50 * time.Millisecond)
				if posts, _ := hook.counts(); posts != 0 {
					t.Fatalf("told at a third of the quota")
				}
			}
		}
		bodies, sigs := hook.waitFor(t, 2)
		var got []server.Notification
		for i, b := range bodies {
			var n server.Notification
			if err := json.Unmarshal([]byte(b), &n); err != nil {
				t.Fatal(err)
			}
			mac := hmac.New(sha256.New, []byte("s3cret"))
			mac.Write([]byte(b))
			if sigs[i] != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
				t.Errorf("notification %d: signature %q does not sign its body", i, sigs[i])
			}
			got = append(got, n)
		}
		for i, at := range []int{50, 100} {
			n := got[i]
			if n.At != at || n.Event != "quota.used" || n.Limit != "per-minute" || n.Key != "k1" || n.Plan != "free" ||
				!strings.HasPrefix(n.Subject, "key:") || n.Quota != 3 || n.Used != int64(2+i) || n.ResetsAt != "2026-11-30T12:01:00Z" || n.ID == "" {
				t.Errorf("notification %d: %+v", i, n)
			}
		}
		f.clock.Advance(time.Minute)
		f.do(t, "GET", "/api/search", "", key)
		f.do(t, "GET", "/api/search", "", key)
		bodies, _ = hook.waitFor(t, 3)
		if !strings.Contains(bodies[2], `"at":50`) || !strings.Contains(bodies[2], `"resetsAt":"2026-11-30T12:02:00Z"`) {
			t.Errorf("the next minute: %s", bodies[2])
		}
		time.Sleep(50 * time.Millisecond)
		if _, n := hook.counts(); n != 3 {
			t.Errorf("%d notifications, want 3", n)
		}
		metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
		if !strings.Contains(metrics, `sluice_notifications_total{result="sent"} 3`) {
			t.Errorf("metrics lack 3 sent:\n%s", grepLines(metrics, "notifications"))
		}
	})
}

// A receiver that fails is tried again (a second later), and a success
// counts as sent.
func TestNotifyRetriesAFailedPost(t *testing.T) {
	hook := &hookReceiver{fail: 1}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	cfg := realtest.Replace(t, "notifyConfig", notifyConfig(t, srv.URL, "s"), "at: [50, 100]", "at: [100]")
	f := newFixture(t, cfg)
	for range 3 {
		f.do(t, "GET", "/api/search", "", nil)
	}
	hook.waitFor(t, 1)
	if posts, _ := hook.counts(); posts != 2 {
		t.Errorf("%d posts, want a failed one and its retry", posts)
	}
}

// A server shutting down sends the notifications it has queued before it
// stops: a slow receiver still gets every one.
func TestNotifyShutdownSendsWhatIsQueued(t *testing.T) {
	hook := &hookReceiver{}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond)
		hook.ServeHTTP(w, r)
	}))
	defer slow.Close()
	f := newFixture(t, notifyConfig(t, slow.URL, "s"))
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 3 { // crosses 50% and 100%: two notifications
		f.do(t, "GET", "/api/search", "", key)
	}
	f.srv.Close()
	if posts, n := hook.counts(); posts != 2 || n != 2 {
		t.Fatalf("after Close the receiver has %d posts, %d notifications; want both sent before Close returned", posts, n)
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if !strings.Contains(metrics, `sluice_notifications_total{result="sent"} 2`) {
		t.Errorf("metrics lack 2 sent:\n%s", grepLines(metrics, "notifications"))
	}
}

// A receiver that never answers holds a shutdown up to DrainTimeout, not
// longer; what was not sent, the post cut short included, is logged and
// counted as dropped.
func TestNotifyShutdownIsBounded(t *testing.T) {
	release := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(release)
	var logs realtest.Buffer
	f := newFixtureWith(t, notifyConfig(t, hung.URL, "s"), func(o *server.Options) {
		o.DrainTimeout = 300 * time.Millisecond
		o.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	key := map[string]string{"X-API-Key": "demo-free-key"}
	for range 3 {
		f.do(t, "GET", "/api/search", "", key)
	}
	time.Sleep(50 * time.Millisecond) // the first post is under way
	start := time.Now()
	f.srv.Close()
	if took := time.Since(start); took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("Close took %v with DrainTimeout 300ms", took)
	}
	if !strings.Contains(logs.String(), "notifications not sent at shutdown") || !strings.Contains(logs.String(), "dropped=2") {
		t.Errorf("log: %s", logs.String())
	}
	metrics := readAll(t, f.do(t, "GET", "/metrics", "", nil))
	if !strings.Contains(metrics, `sluice_notifications_total{result="dropped"} 2`) ||
		!strings.Contains(metrics, `sluice_notifications_total{result="failed"} 0`) {
		t.Errorf("metrics: want the abandoned post and the queued one dropped, none failed:\n%s", grepLines(metrics, "notif"))
	}
}
