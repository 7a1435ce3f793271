package server_test

import (
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/internal/realtest"
)

// frontConfig is testConfig (3 requests per minute, "POST /api/generate"
// costs 2, "GET /api/health" exempt, 127.0.0.1 trusted) with the user and
// plan headers of examples/sluice.yaml, which a front proxy must not take
// from its clients, and the deny status of forward-auth refusals (403 for
// nginx's auth_request).
func frontConfig(t *testing.T, denyStatus string) string {
	t.Helper()
	return realtest.Replace(t, "testConfig", testConfig,
		"identity:\n", "identity:\n  user_header: X-User-ID\n  plan_header: X-Plan\n",
		"response:\n", "response:\n  deny_status: "+denyStatus+"\n  status_path: /rate_limit\n")
}

// TestNginxForwardAuth runs examples/nginx/sluice.conf in a real nginx in
// front of the fixture's upstream, deciding with a real sluice server: what
// a client of nginx sees is what the example promises.
func TestNginxForwardAuth(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403"))
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	key := map[string]string{"Authorization": "Bearer demo-free-key"}

	// Admitted requests reach the upstream; the client sees its quota.
	for i, want := range []string{`"per-minute";r=2;t=60`, `"per-minute";r=1;t=60`, `"per-minute";r=0;t=60`} {
		r := frontCall(t, "GET", base+"/api/search?q=1", key)
		if r.status != 200 || r.body != "upstream:/api/search" {
			t.Fatalf("request %d: %d %q", i+1, r.status, r.body)
		}
		if got := r.header.Get("RateLimit"); got != want {
			t.Errorf("request %d: RateLimit %q, want %q", i+1, got, want)
		}
		if got := r.header.Get("RateLimit-Policy"); got != `"per-minute";q=3;w=60` {
			t.Errorf("request %d: RateLimit-Policy %q", i+1, got)
		}
		if r.header.Get("Retry-After") != "" {
			t.Errorf("request %d: Retry-After on an admitted response", i+1)
		}
	}

	// The next one is refused by sluice (403 to nginx), a 429 to the client
	// with sluice's headers.
	r := frontCall(t, "GET", base+"/api/search?q=1", key)
	if r.status != 429 {
		t.Fatalf("4th request: %d %s", r.status, r.body)
	}
	wantRefusal(t, r, "4th request")
	if n := f.hits.Load(); n != 3 {
		t.Errorf("upstream saw %d requests, want the 3 admitted", n)
	}
	checkStanding(t, f, base, key, "nginx")

	checkOtherClients(t, f, base, "nginx")
}

// TestNginxForwardAuthShed: a request a degradation level sheds reaches
// nginx's client as the reverse proxy answers it, a 503 with sluice's
// Retry-After and a problem of type …#temporary-reduced-capacity, though
// sluice refuses it to nginx with the deny status (403: auth_request would
// turn a 503 into a 500); a refusal by the limits stays a 429, and what
// the level serves passes.
func TestNginxForwardAuthShed(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403")+`
degradation:
  retry_after: 2s
  levels:
    critical: {enter: {in_flight: 100000}, leave: {in_flight: 1000}}
  classes:
    expensive: ["POST /api/generate"]
    health: ["GET /api/health"]
`)
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	key := map[string]string{"Authorization": "Bearer demo-free-key"}
	wantShed := func(r frontResponse, what string) {
		t.Helper()
		for name, want := range map[string]string{"Retry-After": "2", "Content-Type": "application/problem+json", "Cache-Control": "no-store"} {
			if got := r.header.Values(name); len(got) != 1 || got[0] != want {
				t.Errorf("%s: %s %q, want %q", what, name, got, want)
			}
		}
		if got := r.header.Values("RateLimit"); len(got) != 0 {
			t.Errorf("%s: RateLimit %q on a shed request", what, got)
		}
		if r.status != 503 || !strings.Contains(r.body, `"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"`) ||
			!strings.Contains(r.body, `"status":503`) {
			t.Errorf("%s: %d %s, want a 503 of reduced capacity", what, r.status, r.body)
		}
	}
	f.pin(t, "elevated")
	wantShed(frontCall(t, "POST", base+"/api/generate", key), "elevated, the expensive endpoint")
	f.pin(t, "normal")
	for i := range 3 {
		if r := frontCall(t, "GET", base+"/api/search", key); r.status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := frontCall(t, "GET", base+"/api/search", key)
	wantRefusal(t, r, "4th request")
	f.pin(t, "critical")
	wantShed(frontCall(t, "GET", base+"/api/search", key), "critical, a spent client")
	wantShed(frontCall(t, "GET", base+"/api/search", nil), "critical, another client")
	if r := frontCall(t, "GET", base+"/api/health", nil); r.status != 200 || r.body != "upstream:/api/health" {
		t.Errorf("critical, a health check: %d %s, want it served", r.status, r.body)
	}
	if n := f.hits.Load(); n != 4 {
		t.Errorf("upstream saw %d requests, want the 4 admitted", n)
	}
}

// TestNginxForwardAuthGlobalCapacity: with global_status: 503, a request
// the global limits alone refuse reaches nginx's client as the reverse
// proxy answers it, a 503 with Retry-After and a problem of type
// …#temporary-reduced-capacity, though sluice refuses it to nginx with the
// deny status 403: the service is at its capacity, the client is not over
// its quota. A client over its own quota still gets a 429.
func TestNginxForwardAuthGlobalCapacity(t *testing.T) {
	f := newFixture(t, globalConfig(t, "403"))
	base := startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream)
	key := map[string]string{"Authorization": "Bearer demo-free-key"}
	for i := range 3 {
		if r := frontCall(t, "GET", base+"/api/search", key); r.status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
	}
	if r := frontCall(t, "GET", base+"/api/search", nil); r.status != 200 {
		t.Fatalf("another client's first request: %d %s", r.status, r.body)
	}
	r := frontCall(t, "GET", base+"/api/search", nil)
	for name, want := range map[string]string{"Retry-After": "60", "Content-Type": "application/problem+json", "Cache-Control": "no-store"} {
		if got := r.header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("refused by the global limit: %s %q, want %q", name, got, want)
		}
	}
	if r.status != 503 || !strings.Contains(r.body, `"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity"`) ||
		!strings.Contains(r.body, `"status":503`) {
		t.Errorf("refused by the global limit: %d %s, want a 503 of reduced capacity", r.status, r.body)
	}
	if got := r.header.Get("RateLimit"); !strings.Contains(got, `"everyone";r=0;t=60`) {
		t.Errorf("refused by the global limit: RateLimit %q, want the global limit's", got)
	}
	r = frontCall(t, "GET", base+"/api/search", key)
	if r.status != 429 || !strings.Contains(r.body, `"status":429`) || r.header.Get("Retry-After") != "60" {
		t.Errorf("refused by the client's own quota: %d Retry-After %q %s, want a 429", r.status, r.header.Get("Retry-After"), r.body)
	}
	if n := f.hits.Load(); n != 4 {
		t.Errorf("upstream saw %d requests, want the 4 admitted", n)
	}
}

// TestNginxForwardAuthHostRule: through the example, sluice sees the host
// the client asked for (X-Forwarded-Host $host), so a rule for one host
// limits that host's requests and no other's.
func TestNginxForwardAuthHostRule(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403")+hostRule("api.example.com"))
	checkHostRule(t, f, startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream), "nginx")
}

// checkHostRule: through a front proxy, a client (by IP) of the host of
// hostRule("api.example.com") is admitted once and then refused by the
// rule, a 429 naming it; the same client's request for another host is
// admitted, by its plan alone.
func checkHostRule(t *testing.T, f *fixture, base, proxy string) {
	t.Helper()
	api := map[string]string{"Host": "api.example.com"}
	if r := frontCall(t, "GET", base+"/api/search", api); r.status != 200 ||
		r.header.Get("RateLimit") != `"per-minute";r=2;t=60, "one-host.per-minute";r=0;t=60` {
		t.Fatalf("%s: the first request to api.example.com: %d RateLimit %q", proxy, r.status, r.header.Get("RateLimit"))
	}
	if r := frontCall(t, "GET", base+"/api/search", api); r.status != 429 ||
		!strings.Contains(r.header.Get("RateLimit"), `"one-host.per-minute";r=0`) {
		t.Errorf("%s: the second request to api.example.com: %d RateLimit %q, want a 429 by the host's rule", proxy, r.status, r.header.Get("RateLimit"))
	}
	if r := frontCall(t, "GET", base+"/api/search", map[string]string{"Host": "www.example.com"}); r.status != 200 ||
		r.header.Get("RateLimit") != `"per-minute";r=1;t=60` {
		t.Errorf("%s: a request to www.example.com: %d RateLimit %q, want the plan's limit alone", proxy, r.status, r.header.Get("RateLimit"))
	}
	if n := f.hits.Load(); n != 2 {
		t.Errorf("%s: upstream saw %d requests, want the 2 admitted", proxy, n)
	}
}

// TestNginxForwardAuthBadDescription: a description sluice refuses with a
// 400 (here a client's own X-Forwarded-Uri beside the X-Original-URI nginx
// sets) reaches nginx's client as a 500, auth_request's answer to any
// status but 2xx, 401 and 403, and nothing reaches the API.
func TestNginxForwardAuthBadDescription(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403"))
	checkBadDescription(t, f, startNginx(t, serveOn(t, f.srv), f.srv.Config().Upstream), "nginx", 500)
}

// checkBadDescription: through a front proxy, a client that sends its own
// X-Forwarded-Uri and X-Original-URI, naming a path other than the one it
// asks for, gets status, and nothing reaches the API; 400 is sluice's
// problem, naming the headers.
func checkBadDescription(t *testing.T, f *fixture, base, proxy string, status int) {
	t.Helper()
	r := frontCall(t, "POST", base+"/api/generate", map[string]string{"X-Forwarded-Uri": "/api/health", "X-Original-URI": "/api/health"})
	if r.status != status || status == 400 && !strings.Contains(r.body, "X-Forwarded-Method/-Uri and X-Original-Method/-URI describe different requests") {
		t.Errorf("%s: a client's own X-Forwarded-Uri and X-Original-URI: %d %s, want %d", proxy, r.status, r.body, status)
	}
	if n := f.hits.Load(); n != 0 {
		t.Errorf("%s: upstream saw %d requests, want none", proxy, n)
	}
}

// TestNginxWithoutSluice: when sluice cannot be reached, nginx answers 500
// (auth_request's answer to a failed subrequest) and nothing reaches the API:
// the example fails closed.
func TestNginxWithoutSluice(t *testing.T) {
	f := newFixture(t, frontConfig(t, "403"))
	r := frontCall(t, "GET", startNginx(t, listening{admin: deadAddr(t), public: deadAddr(t)}, f.srv.Config().Upstream)+"/api/search", nil)
	if r.status != 500 || f.hits.Load() != 0 {
		t.Errorf("sluice down: %d, upstream saw %d requests", r.status, f.hits.Load())
	}
}

// TestFrontProxyDocsQuoteTheExamples: docs/forward-auth.md shows the example
// files as they are, so the snippets people copy are the ones tested here.
func TestFrontProxyDocsQuoteTheExamples(t *testing.T) {
	doc := readRepoFile(t, "../docs/forward-auth.md")
	for _, path := range []string{"examples/nginx/sluice.conf", "examples/caddy/Caddyfile",
		"examples/traefik/dynamic.yml", "examples/traefik/traefik.yml"} {
		if !strings.Contains(doc, "\n"+readRepoFile(t, "../"+path)+"```\n") {
			t.Errorf("docs/forward-auth.md does not quote %s verbatim (copy the file into its code block)", path)
		}
	}
}

// startNginx runs examples/nginx/sluice.conf in a real nginx, with sluice at
// sluiceAddr and the API at upstream, and returns nginx's base URL.
func startNginx(t *testing.T, sluice listening, upstream string) string {
	t.Helper()
	addr := realtest.FreeAddr(t)
	conf := realtest.Replace(t, "examples/nginx/sluice.conf", readRepoFile(t, "../examples/nginx/sluice.conf"),
		"server 127.0.0.1:9090;", "server "+sluice.admin+";",
		"server 127.0.0.1:8080;", "server "+sluice.public+";",
		"sluice_REPLACE_WITH_NGINX_TOKEN", testToken,
		"server 127.0.0.1:9000;", "server "+strings.TrimPrefix(upstream, "http://")+";",
		"listen 127.0.0.1:8000;", "listen "+addr+";")
	realtest.Nginx(t, addr, conf)
	return "http://" + addr
}

// deadAddr is a loopback address nothing listens on.
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return ln.Addr().String()
}

// wantRefusal checks a refusal as a client sees it through a front proxy:
// a 429, uncacheable, with RateLimit, RateLimit-Policy, Retry-After and an
// RFC 9457 body.
func wantRefusal(t *testing.T, r frontResponse, what string) {
	t.Helper()
	checks := map[string]string{
		"RateLimit":        `"per-minute";r=0;t=60`,
		"RateLimit-Policy": `"per-minute";q=3;w=60`,
		"Retry-After":      "60",
		"Content-Type":     "application/problem+json",
		"Cache-Control":    "no-store",
	}
	for name, want := range checks {
		if got := r.header.Values(name); len(got) != 1 || got[0] != want {
			t.Errorf("%s: %s %q, want %q", what, name, got, want)
		}
	}
	if r.status != 429 || !strings.Contains(r.body, `"type":"https://iana.org/assignments/http-problem-types#quota-exceeded"`) ||
		!strings.Contains(r.body, `"status":429`) {
		t.Errorf("%s: %d %s", what, r.status, r.body)
	}
}

// checkOtherClients is the rest of a front proxy's scenario, once the
// client with an API key has spent its 3 requests (3 admitted in all):
// another client (by IP, from the proxy's X-Forwarded-For) has its own
// quota, and sluice sees the original method and URI (POST /api/generate
// costs 2 of the 3); a concurrent burst then admits exactly the one unit
// left; headers a client makes up about its address, user or plan get it
// nothing (the proxy does not pass them on); exempt routes pass without
// RateLimit headers.
// checkStanding: through the front proxy, the client of key reads its
// standing (all 3 of its minute used) from sluice's public listener, and
// reading reaches neither the API nor the quota.
func checkStanding(t *testing.T, f *fixture, base string, key map[string]string, proxy string) {
	t.Helper()
	hits := f.hits.Load()
	for range 3 {
		r := frontCall(t, "GET", base+"/rate_limit", key)
		if r.status != 200 || !strings.Contains(r.body, `"plan":"free"`) ||
			!strings.Contains(r.body, `{"policy":"per-minute","limit":3,"remaining":0,"used":3,"window":"1m"`) {
			t.Fatalf("%s: the standing: %d %s", proxy, r.status, r.body)
		}
	}
	if n := f.hits.Load(); n != hits {
		t.Errorf("%s: reading the standing reached the API %d times", proxy, n-hits)
	}
}

func checkOtherClients(t *testing.T, f *fixture, base, proxy string) {
	t.Helper()
	r := frontCall(t, "POST", base+"/api/generate", nil)
	if r.status != 200 || r.header.Get("RateLimit") != `"per-minute";r=1;t=60` {
		t.Fatalf("%s: POST /api/generate by IP: %d RateLimit %q", proxy, r.status, r.header.Get("RateLimit"))
	}
	statuses := frontBurst(t, 6, base+"/api/search", func(r frontResponse) {
		if r.status == 429 {
			wantRefusal(t, r, proxy+" burst")
		}
	})
	if statuses[200] != 1 || statuses[429] != 5 {
		t.Errorf("%s: burst of 6 with 1 unit left: statuses %v, want one 200 and five 429", proxy, statuses)
	}
	if n := f.hits.Load(); n != 5 {
		t.Errorf("%s: upstream saw %d requests, want the 5 admitted", proxy, n)
	}
	forged := map[string]string{"Forwarded": "for=203.0.113.7", "X-Forwarded-For": "203.0.113.8",
		"X-Real-IP": "203.0.113.9", "X-User-ID": "someone-else", "X-Plan": "pro"}
	if r := frontCall(t, "GET", base+"/api/search", forged); r.status != 429 {
		t.Errorf("%s: a client with made-up forwarding, user and plan headers: %d %q, want 429", proxy, r.status, r.header.Get("RateLimit"))
	}
	r = frontCall(t, "GET", base+"/api/health", nil)
	if r.status != 200 || len(r.header.Values("RateLimit")) != 0 || len(r.header.Values("RateLimit-Policy")) != 0 {
		t.Errorf("%s: exempt route: %d %v", proxy, r.status, r.header)
	}
	// Made-up headers do not make another client's standing either: this
	// is the address's, all of its minute spent above.
	if r := frontCall(t, "GET", base+"/rate_limit", forged); r.status != 200 || !strings.Contains(r.body, `"plan":"free"`) ||
		!strings.Contains(r.body, `"remaining":0,"used":3`) {
		t.Errorf("%s: the standing of a client with made-up headers: %d %s", proxy, r.status, r.body)
	}
}

// readRepoFile reads a file of the repository, path relative to server/.
func readRepoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type frontResponse struct {
	status int
	header http.Header
	body   string
}

// frontClient opens a new connection per request, so that no idle
// connection (nor its goroutines) outlives the test.
var frontClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}

// frontCall sends one request through a front proxy and reads the answer;
// header's "Host" is the request's host.
func frontCall(t *testing.T, method, url string, header map[string]string) frontResponse {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := frontClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return frontResponse{resp.StatusCode, resp.Header, string(b)}
}

// frontBurst sends n GETs to url at once and counts the statuses; each
// response is passed to check.
func frontBurst(t *testing.T, n int, url string, check func(frontResponse)) map[int]int {
	t.Helper()
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		statuses = map[int]int{}
		start    = make(chan struct{})
	)
	for range n {
		wg.Go(func() {
			<-start
			resp, err := frontClient.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			r := frontResponse{resp.StatusCode, resp.Header, string(b)}
			mu.Lock()
			defer mu.Unlock()
			statuses[r.status]++
			check(r)
		})
	}
	close(start)
	wg.Wait()
	return statuses
}
