package migrate_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/internal/realtest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/migrate"
	"github.com/sluice-dev/sluice/server"
)

// Replay parameters: nginx's rate of 2r/s frees a slot every 500ms, and
// burst=4 makes a bucket of 5.
const (
	replaySlot   = 500 * time.Millisecond
	replayBucket = 5
	replayKeys   = 4
	replayBursts = 6
)

// burst is one client sending n requests at once, at offset at.
type burst struct {
	key int
	at  time.Duration
	n   int
}

// replayTrace returns bursts for replayKeys clients whose every decision
// is at least half a slot (50ms) from flipping: a burst that finds the
// bucket empty is followed after k+½ slots, other bursts after whole
// slots, so that at every burst the bucket's level is a whole number plus
// ½ (or 0), never within 250ms of the edge where the time between nginx's
// clock and sluice's, or a late wake-up on a busy machine (make test runs
// packages side by side under -race), could change the outcome. Where the timing cannot
// matter, the semantics alone decide, and the two must agree exactly.
func replayTrace(seed uint64) []burst {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []burst
	for k := range replayKeys {
		at := time.Duration(r.IntN(5)) * replaySlot
		level, reset := 0.0, true
		for range replayBursts {
			n := 1 + r.IntN(8)
			out = append(out, burst{key: k, at: at, n: n})
			level = min(level+float64(n), replayBucket) // refused requests add nothing
			gap := time.Duration(1+r.IntN(6)) * replaySlot
			if reset {
				gap += replaySlot / 2
			}
			drained := float64(gap) / float64(replaySlot)
			reset = level-drained <= 0
			level = max(level-drained, 0)
			at += gap
		}
	}
	return out
}

// TestNginxReplay sends one request trace through real nginx configured
// with limit_req and through sluice serving the configuration `sluice
// import` wrote from the same nginx file, and compares what each admitted
// per client and per second. For nodelay (a bucket of burst+1) they agree
// exactly. For delay (the same admissions, held) each client's total
// agrees exactly and each second within one request: nginx's bucket, while
// it holds requests, sometimes drains as if its last update were up to
// 200ms off the requests' arrival (its error log shows the excess), which
// moves an admission into the next window.
//
// The cases, and this test beside the package's other real-time
// comparisons, run in parallel: each has its own nginx (port and
// directory), sluice, store and upstream, and spends its time waiting for
// the trace's next burst, not computing.
func TestNginxReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, opts string
		perWindow  int // tolerance per client and second
		// key is the zone's key; with $http_x_client each client sends
		// its own X-Client.
		key string
		// other is what else the site limits: a location the trace never
		// asks, whose zone must not limit /replay/.
		other string
	}{
		{"nodelay", "burst=4 nodelay", 0, "$binary_remote_addr", ""},
		{"delay", "burst=4 delay=1", 1, "$binary_remote_addr", ""},
		{"header key, another location's zone beside", "burst=4 nodelay", 0, "$http_x_client",
			"limit_req_zone $binary_remote_addr zone=other:1m rate=1r/m;\nlimit_req_zone $host zone=hosts:1m rate=1r/m;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
			t.Cleanup(up.Close)
			trace := replayTrace(1)
			// The comparison holds only if the schedule was kept: a run in
			// which a request left more than replayLate after its time (a
			// machine too busy) is run again, on fresh servers.
			for attempt := 1; ; attempt++ {
				targets := startReplayTargets(t, up.URL, tc.key, tc.opts, tc.other)
				got, late := replay(t, trace, targets, tc.key == "$http_x_client")
				if late <= replayLate {
					t.Logf("the latest request left %s after its time", late.Round(time.Millisecond))
					compareWindows(t, trace, got, tc.perWindow)
					break
				}
				if attempt == 3 {
					t.Fatalf("in 3 runs the machine never kept the schedule: a request left up to %s late (at most %s keeps every decision clear of the edge)", late, replayLate)
				}
				t.Logf("run %d: a request left %s late, more than %s: running again", attempt, late, replayLate)
			}
		})
	}
}

// TestNginxLocationsAgree sends one sequence of requests from one address
// to real nginx and to sluice serving the import of the same file, whose
// locations nest: a prefix, a location below it with a zone of its own (the
// prefix's zone does not apply there), one without limit_req, one keyed by
// a header, and one keyed by a query parameter and the path together. At one request a minute no
// timing matters: the statuses must be the same, request by request.
func TestNginxLocationsAgree(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	t.Cleanup(up.Close)
	addr := realtest.FreeAddr(t)
	site := fmt.Sprintf(`limit_req_zone $binary_remote_addr zone=a:1m rate=1r/m;
limit_req_zone $binary_remote_addr zone=b:1m rate=1r/m;
limit_req_zone $http_x_tenant zone=t:1m rate=1r/m;
limit_req_zone $arg_tenant$uri zone=q:1m rate=1r/m;
server {
    listen %[1]s;
    limit_req_status 429;
    location /api/ { limit_req zone=a; proxy_pass %[2]s; }
    location /api/admin/ { limit_req zone=b; proxy_pass %[2]s; }
    location /api/health { proxy_pass %[2]s; }
    location /api/tenants/ { limit_req zone=t; proxy_pass %[2]s; }
    location /q/ { limit_req zone=q; proxy_pass %[2]s; }
    location / { proxy_pass %[2]s; }
}
`, addr, up.URL)
	targets := startTargets(t, addr, site, up.URL)
	paths := []string{"/api/items", "/api/items", "/api/admin/1", "/api/admin/2", "/api/health", "/api/health",
		"/api/tenants/x", "/api/tenants/y", "/api/tenants/z", "/other", "/api/more",
		"/q/a?tenant=x", "/q/a?tenant=x", "/q/b?tenant=x", "/q/a?tenant=y", "/q/a", "/q/a"}
	got := map[string][]int{}
	for name, url := range targets {
		for i, p := range paths {
			req, _ := http.NewRequest("GET", url+p, nil)
			if i == 6 || i == 7 { // one tenant twice; the third /api/tenants/ request has none, which nginx does not count
				req.Header.Set("X-Tenant", "acme")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got[name] = append(got[name], resp.StatusCode)
		}
	}
	want := []int{200, 429, 200, 429, 200, 200, 200, 429, 200, 200, 429,
		200, 429, 200, 200, 200, 429} // /q/: per query parameter and path together, and per path alone without it
	if !slices.Equal(got["nginx"], want) {
		t.Fatalf("nginx answered %v, want %v: the test's idea of nginx is wrong", got["nginx"], want)
	}
	if !slices.Equal(got["sluice"], got["nginx"]) {
		t.Errorf("paths %v:\nnginx  %v\nsluice %v", paths, got["nginx"], got["sluice"])
	}
}

// replayLate is how late a request may leave for the replay to count: the
// trace keeps every decision 250ms clear of the edge, and both targets see
// a late request alike but for the few milliseconds between them.
const replayLate = 100 * time.Millisecond

// startReplayTargets starts nginx in front of upstream, limiting /replay/
// by a zone of key with limit_req opts, and with other's zones (if any) a
// location /other/ and, below /replay/, /replay/admin/; and sluice serving
// the configuration imported from the same nginx file. It returns their
// base URLs by name.
func startReplayTargets(t *testing.T, upstream, key, opts, other string) map[string]string {
	t.Helper()
	addr := realtest.FreeAddr(t)
	var others string
	if other != "" {
		others = fmt.Sprintf(`
    location /other/ { limit_req zone=other; limit_req zone=hosts; proxy_pass %s; }
    location /replay/admin/ { limit_req zone=other burst=2 nodelay; proxy_pass %s; }`, upstream, upstream)
	}
	site := fmt.Sprintf(`limit_req_zone %s zone=replay:1m rate=2r/s;
%s
server {
    listen %s;
    location /replay/ {
        limit_req zone=replay %s;
        limit_req_status 429;
        proxy_pass %s;
    }%s
    location / {
        proxy_pass %s;
    }
}
`, key, other, addr, opts, upstream, others, upstream)
	return startTargets(t, addr, site, upstream)
}

// startTargets starts nginx serving site on addr, and sluice serving the
// configuration imported from site in front of upstream, and returns their
// base URLs by name.
func startTargets(t *testing.T, addr, site, upstream string) map[string]string {
	t.Helper()
	realtest.Nginx(t, addr, site)
	nginxURL := "http://" + addr

	tr, err := migrate.Nginx(site, "replay.conf")
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"nginx": nginxURL, "sluice": startSluice(t, tr, upstream)}
}

// startSluice starts sluice serving, enforcing, the configuration of tr in
// front of upstream, and returns its base URL.
func startSluice(t *testing.T, tr *migrate.Translation, upstream string) string {
	t.Helper()
	files, err := tr.Files(true)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("replay.yaml", []byte("upstream: "+upstream+"\n"+files[migrate.ConfigFile]))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New()
	t.Cleanup(func() { store.Close() })
	srv, err := server.New(server.Options{Config: cfg, Store: store, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	sl := httptest.NewServer(srv.PublicHandler())
	t.Cleanup(sl.Close)
	return sl.URL
}

// replay sends every burst to each target at its time, each client from its
// own loopback address (and, with header, its own X-Client), and returns per target the statuses in trace order,
// and how late the latest request left.
func replay(t *testing.T, trace []burst, targets map[string]string, header bool) (map[string][][]int, time.Duration) {
	t.Helper()
	clients := make([]*http.Client, replayKeys)
	for k := range clients {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+k))}
		clients[k] = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			DialContext:         (&net.Dialer{LocalAddr: local}).DialContext,
			MaxIdleConnsPerHost: 64,
		}}
	}
	out := map[string][][]int{}
	for name := range targets {
		out[name] = make([][]int, len(trace))
		for i, b := range trace {
			out[name][i] = make([]int, b.n)
		}
	}
	// Open each client's connections before the clock starts (on the
	// unlimited path), so that no request waits for a handshake.
	var wg sync.WaitGroup
	for k, c := range clients {
		for _, url := range targets {
			for range replayBucket + 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp, err := c.Get(url + "/warm"); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					} else {
						t.Errorf("warming client %d: %v", k, err)
					}
				}()
			}
		}
	}
	wg.Wait()
	var (
		lateMu sync.Mutex
		late   time.Duration
	)
	start := time.Now().Add(200 * time.Millisecond)
	send := func(name, url string, b burst, status *int) {
		defer wg.Done()
		req, _ := http.NewRequestWithContext(context.Background(), "GET", url+"/replay/", nil)
		if header {
			req.Header.Set("X-Client", fmt.Sprintf("client-%d", b.key))
		}
		lateMu.Lock()
		late = max(late, time.Since(start.Add(b.at)))
		lateMu.Unlock()
		resp, err := clients[b.key].Do(req)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		*status = resp.StatusCode
	}
	for i, b := range trace {
		for j := range b.n {
			wg.Add(1)
			go func() {
				// One wake-up sends to every target: a late one delays all alike.
				defer wg.Done()
				time.Sleep(time.Until(start.Add(b.at)))
				for name, url := range targets {
					wg.Add(1)
					go send(name, url, b, &out[name][i][j])
				}
			}()
		}
	}
	wg.Wait()
	return out, late
}

// compareWindows compares the admitted counts per client and per second,
// which may differ by at most tolerance, and per client, which must agree.
func compareWindows(t *testing.T, trace []burst, got map[string][][]int, tolerance int) {
	t.Helper()
	type window struct{ key, second int }
	count := func(statuses [][]int) (map[window]int, int, int) {
		admitted, ok, refused := map[window]int{}, 0, 0
		for i, b := range trace {
			for _, s := range statuses[i] {
				switch s {
				case 200:
					admitted[window{b.key, int(b.at / time.Second)}]++
					ok++
				case 429:
					refused++
				default:
					t.Errorf("status %d", s)
				}
			}
		}
		return admitted, ok, refused
	}
	ng, ngOK, ngRefused := count(got["nginx"])
	sl, slOK, slRefused := count(got["sluice"])
	t.Logf("nginx admitted %d, refused %d; sluice admitted %d, refused %d", ngOK, ngRefused, slOK, slRefused)
	if ngOK < 20 || ngRefused < 20 {
		t.Fatalf("the trace does not exercise the limit: nginx admitted %d and refused %d", ngOK, ngRefused)
	}
	var diffs []string
	ngTotal, slTotal := make([]int, replayKeys), make([]int, replayKeys)
	for w := range mergeKeys(ng, sl) {
		ngTotal[w.key] += ng[w]
		slTotal[w.key] += sl[w]
		if d := ng[w] - sl[w]; d > tolerance || -d > tolerance {
			diffs = append(diffs, fmt.Sprintf("client %d, second %d: nginx %d, sluice %d", w.key, w.second, ng[w], sl[w]))
		}
	}
	for k := range replayKeys {
		if ngTotal[k] != slTotal[k] {
			diffs = append(diffs, fmt.Sprintf("client %d in all: nginx %d, sluice %d", k, ngTotal[k], slTotal[k]))
		}
	}
	if len(diffs) > 0 {
		for i, b := range trace {
			t.Logf("client %d at %s: %d requests: nginx %v, sluice %v", b.key, b.at, b.n, got["nginx"][i], got["sluice"][i])
		}
		t.Errorf("admitted counts differ beyond ±%d per second, or in a client's total:\n%s", tolerance, strings.Join(diffs, "\n"))
	}
}

func mergeKeys[K comparable](a, b map[K]int) map[K]bool {
	out := map[K]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// TestNginxConnAgrees holds the import of limit_conn to real nginx: with
// two requests of one address held by the upstream, a third on the
// limited location is refused by both, one elsewhere passes, and once the
// two end, the next passes again.
func TestNginxConnAgrees(t *testing.T) {
	up := newHeldUpstream(t)
	addr := realtest.FreeAddr(t)
	site := fmt.Sprintf(`limit_conn_zone $binary_remote_addr zone=addr:1m;
server {
    listen %[1]s;
    limit_conn_status 429;
    location /slow/ { limit_conn addr 2; proxy_pass %[2]s; }
    location / { proxy_pass %[2]s; }
}
`, addr, up.URL)
	targets := startTargets(t, addr, site, up.URL)
	c := http.DefaultClient
	for _, name := range []string{"nginx", "sluice"} {
		url := targets[name]
		var third, elsewhere int
		first, second := up.withTwoHeld(t, name, c, url, func() {
			third, elsewhere = status(t, c, url+"/slow/b"), status(t, c, url+"/fast")
		})
		after := status(t, c, url+"/slow/c")
		got := []int{third, elsewhere, first, second, after}
		if want := []int{429, 200, 200, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: third, elsewhere, the two held, the one after: %v, want %v", name, got, want)
		}
	}
}

// TestNginxAllowlistAgrees holds the import of nginx's allowlist (a map of
// a geo block, whose empty key nginx does not count) to real nginx: a
// client of an allowlisted address is never refused, another is.
func TestNginxAllowlistAgrees(t *testing.T) {
	up := okUpstream(t)
	addr := realtest.FreeAddr(t)
	site := fmt.Sprintf(`geo $limit { default 1; 127.0.0.3 0; }
map $limit $limit_key { 0 ""; 1 $binary_remote_addr; }
limit_req_zone $limit_key zone=strict:1m rate=1r/m;
server {
    listen %[1]s;
    limit_req_status 429;
    location / { limit_req zone=strict; proxy_pass %[2]s; }
}
`, addr, up.URL)
	targets := startTargets(t, addr, site, up.URL)
	for name, url := range targets {
		var got []int
		for _, from := range []byte{2, 3, 2, 3, 3} {
			got = append(got, status(t, clientFrom(from, true), url+"/x"))
		}
		if want := []int{200, 200, 429, 200, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: from 127.0.0.2, .3, .2, .3, .3: %v, want %v", name, got, want)
		}
	}
}
