package deploy_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// TestImageBinaryServes runs the binary found in the image as the image's
// command runs it, on deploy/sluice.yaml (the configuration a container
// mounts) with its upstream pointed at a test server: a client's request
// is limited and proxied, the admin listener wants the Prometheus token,
// and `sluice version` names the commit the image was built from.
func TestImageBinaryServes(t *testing.T) {
	t.Parallel()
	img := theImage(t)

	var upstreamHits atomic.Int64
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamHits.Add(1)
		w.Write([]byte("upstream answered " + r.URL.Path))
	}))
	defer upstream.Close()
	cfg := realtest.Replace(t, "deploy/sluice.yaml", readFile(t, "sluice.yaml"),
		"upstream: http://127.0.0.1:8000", "upstream: "+upstream.URL)
	public, admin := realtest.FreeAddr(t), realtest.FreeAddr(t)
	s := serveWith(t, public, admin, img.command(t, writeFile(t, "sluice.yaml", cfg), public, admin)...)

	// The anonymous plan's per-minute limit is a sliding window counter:
	// across a minute's end it weighs the earlier minute's requests by what
	// is left of it, so a burst that straddles one may pass a 61st. Start
	// the burst at least 10 s before the next minute.
	if left := time.Minute - time.Duration(time.Now().UnixNano())%time.Minute; left < 10*time.Second {
		time.Sleep(left + 100*time.Millisecond)
	}
	code, body, h := get(t, "http://"+s.public+"/api/orders", "")
	if code != http.StatusOK || body != "upstream answered /api/orders" || h.Get("RateLimit") == "" {
		t.Errorf("a client's request through the image's binary: %d %q, RateLimit %q", code, body, h.Get("RateLimit"))
	}
	// A client known by its address alone is on the anonymous plan, 60
	// requests a minute: the 61st at once is refused without reaching the
	// upstream.
	for range 59 {
		get(t, "http://"+s.public+"/api/orders", "")
	}
	before := upstreamHits.Load()
	if code, _, h := get(t, "http://"+s.public+"/api/orders", ""); code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("the 61st request at once: %d, Retry-After %q; want 429 with Retry-After", code, h.Get("Retry-After"))
	}
	if upstreamHits.Load() != before {
		t.Error("a refused request reached the upstream")
	}

	if code, _, _ := get(t, "http://"+s.admin+"/metrics", ""); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token from loopback: %d, want 401 (loopback_scopes: [])", code)
	}
	if code, body, _ := get(t, "http://"+s.admin+"/metrics", exampleToken); code != http.StatusOK || !strings.Contains(body, "sluice_decisions_total") {
		t.Errorf("/metrics with the Prometheus token: %d", code)
	}
	if code, body, _ := get(t, "http://"+s.admin+"/readyz", ""); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}

	out, err := exec.Command(img.binary(), "version").CombinedOutput()
	if err != nil {
		t.Fatalf("sluice version: %v\n%s", err, out)
	}
	// The commit must be this repository's, HEAD or (when a commit landed
	// since the image was built) one of its ancestors.
	m := regexp.MustCompile(`(?m)^commit ([0-9a-f]{40})( \(modified\))?$`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("sluice version in the image names no commit:\n%s", out)
	}
	if err := exec.Command("git", "merge-base", "--is-ancestor", m[1], "HEAD").Run(); err != nil {
		t.Errorf("sluice version in the image names commit %s, which is not HEAD or an ancestor of it (%v)", m[1], err)
	}
}
