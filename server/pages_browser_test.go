package server_test

import (
	"bufio"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/redis"
	"github.com/sluice-dev/sluice/server"
)

// pageServer is a server for the web pages' tests: its listeners, an
// upstream that answers "ok" and counts the requests of each API key it
// sees, and the Redis it stores on, if any.
type pageServer struct {
	srv         *server.Server
	pub, admin  *httptest.Server
	redisServer *redistest.Server

	mu   sync.Mutex
	hits map[string]int // by API key (X-API-Key, or Authorization without "Bearer ")
}

// newPageServer runs a server for cfgText (with the test caller of
// testAdmin) on clock, or on the real time when clock is nil; over a real
// Redis behind the failover (as sluice serve runs it) when onRedis, else
// over memory.
func newPageServer(t *testing.T, cfgText string, clock func() time.Time, onRedis bool) *pageServer {
	t.Helper()
	d := &pageServer{hits: map[string]int{}}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-API-Key")
		if key == "" {
			key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		d.mu.Lock()
		d.hits[key]++
		d.mu.Unlock()
		w.Write([]byte("ok"))
	}))
	t.Cleanup(up.Close)
	file := filepath.Join(t.TempDir(), "sluice.yaml")
	if err := os.WriteFile(file, []byte("upstream: "+up.URL+"\n"+cfgText+testAdmin), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	memOpts := []memory.Option{memory.WithSweepInterval(0)}
	if clock != nil {
		memOpts = append(memOpts, memory.WithClock(clock))
	}
	local := memory.New(memOpts...)
	t.Cleanup(func() { local.Close() })
	opts := server.Options{Config: cfg, Clock: clock, Store: local, Memory: local,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if onRedis {
		d.redisServer = redistest.Standalone(t)
		// Timeouts far above Redis's answers on a loaded machine: only an
		// outage makes fallback decisions.
		ropts := []redis.Option{redis.WithTimeout(5 * time.Second)}
		if clock != nil {
			ropts = append(ropts, redis.WithTimeForTesting(clock))
		}
		primary := redis.New(d.redisServer.Client(t), ropts...)
		fo, err := failover.New(primary, local, failover.Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		opts.Store, opts.Failover = fo, fo
	}
	if d.srv, err = server.New(opts); err != nil {
		t.Fatal(err)
	}
	d.pub = httptest.NewServer(d.srv.PublicHandler())
	t.Cleanup(d.pub.Close)
	d.admin = httptest.NewServer(d.srv.AdminHandler())
	t.Cleanup(d.admin.Close)
	return d
}

// upstreamHits returns the requests with key the upstream received.
func (d *pageServer) upstreamHits(key string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits[key]
}

// get sends a request and returns its status and body.
func get(t *testing.T, method, url string, body string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads the admin listener's /metrics into series → value.
func scrape(t *testing.T, admin string) map[string]float64 {
	t.Helper()
	_, body := get(t, "GET", admin+"/metrics", "", map[string]string{server.TokenHeader: testToken})
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// overflow is a JavaScript expression listing the page's elements that
// reach beyond the window's edges, and the document if it scrolls
// sideways: empty when nothing is wider than the window.
const overflow = `(function () {
	const w = window.innerWidth, out = [];
	if (document.documentElement.scrollWidth > w) out.push("document: scrollWidth " + document.documentElement.scrollWidth + " > " + w);
	for (const e of document.body.querySelectorAll("*")) {
		const r = e.getBoundingClientRect();
		if (r.width === 0 && r.height === 0) continue;
		if (r.right > w + 0.5 || r.left < -0.5) out.push(e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") + ": " + r.left.toFixed(1) + ".." + r.right.toFixed(1) + " of " + w);
	}
	return out;
})()`

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.ReplaceAll(s, ",", ""))
	if err != nil {
		t.Fatalf("%q is not a count: %v", s, err)
	}
	return n
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// lowContrast is a JavaScript expression listing the page's text (outside
// SVG charts) whose contrast with its background is below WCAG 2's AA
// level: 4.5:1, or 3:1 for large text. Empty when all text is readable.
const lowContrast = `(function () {
	const lum = c => {
		const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map(Number).map(v => {
			v /= 255;
			return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
		});
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const background = e => {
		for (; e; e = e.parentElement) {
			const m = getComputedStyle(e).backgroundColor.match(/[\d.]+/g);
			if (m && (m.length < 4 || Number(m[3]) > 0)) return getComputedStyle(e).backgroundColor;
		}
		return "rgb(255, 255, 255)";
	};
	const out = [];
	for (const e of document.body.querySelectorAll("*")) {
		if (e.closest("svg") || e.getBoundingClientRect().width === 0) continue;
		if (![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim() !== "")) continue;
		const s = getComputedStyle(e), a = lum(s.color), b = lum(background(e));
		const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), size = parseFloat(s.fontSize);
		const large = size >= 24 || (size >= 18.66 && Number(s.fontWeight) >= 700);
		if (ratio < (large ? 3 : 4.5)) out.push(e.tagName.toLowerCase() + " " + ratio.toFixed(2) + ":1 " + JSON.stringify(e.textContent.trim().slice(0, 40)));
	}
	return out;
})()`
