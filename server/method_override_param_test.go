package server_test

import (
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// overrideSeen is an upstream recording the method, query and body of the
// last request it served, and how many it served.
type overrideSeen struct {
	mu                  sync.Mutex
	method, query, body string
	served              int
}

func (u *overrideSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	defer u.mu.Unlock()
	u.method, u.query, u.body, u.served = r.Method, r.URL.RawQuery, string(b), u.served+1
}

func (u *overrideSeen) last() (method, query, body string, served int) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.method, u.query, u.body, u.served
}

// multipartOverride is a multipart/form-data body whose first field is
// _method=delete, followed by a file of size bytes, and its Content-Type.
func multipartOverride(t *testing.T, size int) (body, contentType string) {
	t.Helper()
	var b strings.Builder
	mw := multipart.NewWriter(&b)
	if err := mw.WriteField("_method", "delete"); err != nil {
		t.Fatal(err)
	}
	fw, err := mw.CreateFormFile("avatar", "a.png")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(strings.Repeat("x", size)))
	mw.Close()
	return b.String(), mw.FormDataContentType()
}

// formHeader is the Content-Type of an HTML form's body.
var formHeader = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}

// remaining is the RateLimit field's remaining quota of the per-minute
// limit, as its prefix: `"per-minute";r=N`.
func remaining(n string) string { return `"per-minute";r=` + n }

// Laravel serves a POST whose query's _method parameter names another
// method as that method. The reverse proxy judges such a POST as the
// method named when the configuration judges that at least as strictly as
// a POST (a DELETE costs 3 here, a POST 1): it is admitted, charged 3 (the
// RateLimit field's remaining quota shows it), and reaches the upstream as
// the POST it is, its query and body as sent, _method in any case.
func TestProxyJudgesAPostAsTheMethodItsParameterNames(t *testing.T) {
	for _, path := range []string{"/api/items/1?_method=DELETE", "/api/items/1?_METHOD=delete"} {
		t.Run(path, func(t *testing.T) {
			up := &overrideSeen{}
			f := newFixtureOn(t, overrideConfig, up)
			r := f.do(t, "POST", path, "name=a", formHeader)
			if body := readAll(t, r); r.StatusCode != http.StatusOK {
				t.Fatalf("POST %s: %d %s, want 200", path, r.StatusCode, body)
			}
			if rl := r.Header.Get("RateLimit"); !strings.HasPrefix(rl, remaining("0")) {
				t.Errorf("RateLimit %q, want r=0: charged as a DELETE (3)", rl)
			}
			method, query, body, _ := up.last()
			if _, want, _ := strings.Cut(path, "?"); method != "POST" || query != want || body != "name=a" {
				t.Errorf("the upstream got %s ?%s %q, want the POST ?%s as sent", method, query, body, want)
			}
		})
	}
}

// A _method of a form body (Rails' and Laravel's HTML forms) is not read:
// reading a body before the limits decide would ask a refused client for
// it (Expect: 100-continue) and hold its first bytes to read_timeout in
// all. Such a POST is charged as the POST it is (1 here), as forward-auth,
// which never sees a body, charges it, and its body streams to the
// upstream as sent, urlencoded or multipart.
func TestProxyReadsNoBodyForItsMethodParameter(t *testing.T) {
	multi, multiType := multipartOverride(t, 100<<10)
	for name, c := range map[string]struct{ body, contentType string }{
		"form":      {"name=a&_method=delete", "application/x-www-form-urlencoded"},
		"multipart": {multi, multiType},
	} {
		t.Run(name, func(t *testing.T) {
			up := &overrideSeen{}
			f := newFixtureOn(t, overrideConfig, up)
			r := f.do(t, "POST", "/api/items/1", c.body, map[string]string{"Content-Type": c.contentType})
			if body := readAll(t, r); r.StatusCode != http.StatusOK {
				t.Fatalf("POST: %d %s, want 200", r.StatusCode, body)
			}
			if rl := r.Header.Get("RateLimit"); !strings.HasPrefix(rl, remaining("2")) {
				t.Errorf("RateLimit %q, want r=2: charged as the POST (1)", rl)
			}
			if method, _, body, _ := up.last(); method != "POST" || body != c.body {
				t.Errorf("the upstream got %s with %d bytes, want the POST as sent (%d bytes)", method, len(body), len(c.body))
			}
		})
	}
}

// A POST whose _method names a method the configuration judges less
// strictly than a POST (a GET, where a POST costs 2) is judged as the
// POST it is, which charges it at least as much: charged 2, and passed on
// as sent.
func TestProxyJudgesAPostNamingALaxerMethodAsThePost(t *testing.T) {
	postCosts := strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"POST /api/items/{id}": 2`, 1)
	up := &overrideSeen{}
	f := newFixtureOn(t, postCosts, up)
	r := f.do(t, "POST", "/api/items/1?_method=get", "a=b", formHeader)
	if body := readAll(t, r); r.StatusCode != http.StatusOK {
		t.Fatalf("POST with _method=get: %d %s, want 200", r.StatusCode, body)
	}
	if rl := r.Header.Get("RateLimit"); !strings.HasPrefix(rl, remaining("1")) {
		t.Errorf("RateLimit %q, want r=1: charged as a POST (2), not a GET (1)", rl)
	}
	if method, _, body, _ := up.last(); method != "POST" || body != "a=b" {
		t.Errorf("the upstream got %s %q, want the POST as sent", method, body)
	}
}

// A POST whose query's _method parameters name two methods, one that is
// not a method, or a method that neither judges alone
// (a DELETE costs 3 and a POST 2: each would charge some request less than
// the other) is refused with a 400 problem naming _method before the
// limits decide: nothing is charged, and the upstream never serves it.
func TestProxyRefusesAPostItsMethodParameterCannotJudge(t *testing.T) {
	both := strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"DELETE /api/items/{id}": 3, "POST /api/items/{id}": 2`, 1)
	cases := []struct {
		name, cfg, path, body string
	}{
		{"two methods named", overrideConfig, "/api/items/1?_method=PUT&_method=delete", "a=b"},
		{"not a method", overrideConfig, "/api/items/1?_method=de%20lete", "a=b"},
		{"neither method judges it alone", both, "/api/items/1?_method=delete", "a=b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := &overrideSeen{}
			f := newFixtureOn(t, c.cfg, up)
			r := f.do(t, "POST", c.path, c.body, formHeader)
			if body := readAll(t, r); r.StatusCode != http.StatusBadRequest || !strings.Contains(body, "_method") {
				t.Errorf("POST %s %s: %d %s, want a 400 naming _method", c.path, c.body, r.StatusCode, body)
			}
			if _, _, _, served := up.last(); served != 0 {
				t.Errorf("the upstream served it")
			}
			r = f.do(t, "GET", "/api/other", "", nil)
			readAll(t, r)
			if rl := r.Header.Get("RateLimit"); !strings.HasPrefix(rl, remaining("2")) {
				t.Errorf("a GET after it: RateLimit %q, want r=2: the refused POST charged nothing", rl)
			}
		})
	}
}

// A POST whose _method names a method judged as strictly as a POST (here
// no cost, rule or exemption names a method) reaches the upstream as
// sent: its _method and its whole body. So does any POST naming no
// other method, and a request of another method, whatever its _method.
func TestProxyPassesAMethodParameterJudgedAsStrictlyAsAPost(t *testing.T) {
	noMethods := strings.Replace(overrideConfig, `"DELETE /api/items/{id}": 3`, `"/api/items/{id}": 2`, 1)
	long := "_method=delete&text=" + strings.Repeat("y", 100<<10)
	cases := []struct {
		name, cfg, method, path, body string
		header                        map[string]string
	}{
		{"no method judged apart, query", noMethods, "POST", "/api/items/1?_method=DELETE", "", nil},
		{"no method judged apart, a long form", noMethods, "POST", "/api/items/1", long, formHeader},
		{"a POST naming POST", overrideConfig, "POST", "/api/items/1?_method=post", long, formHeader},
		{"a PUT naming DELETE", overrideConfig, "PUT", "/api/items/1?_method=DELETE", "", nil},
		{"a JSON body is not read", overrideConfig, "POST", "/api/items/1", `{"_method":"delete"}`,
			map[string]string{"Content-Type": "application/json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up := &overrideSeen{}
			f := newFixtureOn(t, c.cfg, up)
			r := f.do(t, c.method, c.path, c.body, c.header)
			if body := readAll(t, r); r.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: %d %s, want 200", c.method, c.path, r.StatusCode, body)
			}
			method, query, body, _ := up.last()
			if _, want, _ := strings.Cut(c.path, "?"); method != c.method || query != want {
				t.Errorf("the upstream got %s ?%s, want %s ?%s", method, query, c.method, want)
			}
			if body != c.body {
				t.Errorf("the upstream got a body of %d bytes, want the %d sent", len(body), len(c.body))
			}
		})
	}
}

// The proxy never reads a body for its _method, under a configuration
// that judges requests by their method too: a form body streams to the
// upstream as the client sends it, its first bytes before its end.
func TestProxyStreamsAFormBodyItJudgesByMethod(t *testing.T) {
	first := make(chan string, 1)
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		first <- string(b[:n])
		io.Copy(io.Discard, r.Body)
	})
	f := newFixtureOn(t, overrideConfig, up)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", f.http.URL+"/api/items/1", pr)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	pw.Write([]byte("_method=delete&a=b"))
	select {
	case got := <-first:
		if got != "_method=delete&a=b" {
			t.Errorf("the upstream read %q first", got)
		}
	case <-time.After(3 * time.Second):
		t.Error("the upstream got none of the body before its end: sluice read it")
	}
	pw.Close()
	<-done
}

// The stale cache records and serves GET answers only: a POST judged as a
// GET (a GET costs 2 here, a POST 1) is neither. At level 1 its answer is
// not recorded, and at level 2 (its endpoints of class critical, so that
// writes are not shed) it reaches the upstream, never answered by the
// copy of a GET to the same URL.
func TestAPostJudgedAsAGetIsNeverAStaleCopy(t *testing.T) {
	var down atomic.Bool
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "answer to "+r.Method)
	})
	cfg := strings.Replace(staleConfig, "window: 1m}]\ndefault_plan", "window: 1m}]\n    costs: {\"GET /api/items/{id}\": 2}\ndefault_plan", 1) +
		"  classes: {critical: [\"/api/items/\"]}\n"
	f := newFixtureOn(t, cfg, up)
	pin := func(level string) {
		t.Helper()
		resp := f.do(t, "PUT", "/v1/degradation", `{"level":"`+level+`"}`, nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("pin %s: %d", level, resp.StatusCode)
		}
	}
	// Every request carries the form's Content-Type, which the copies are
	// kept under (the limits read it).
	send := func(method, path, body string) (int, string, string) {
		t.Helper()
		resp := f.do(t, method, path, body, formHeader)
		return resp.StatusCode, resp.Header.Get("Cache-Status"), readAll(t, resp)
	}
	pin("elevated")
	if code, _, body := send("GET", "/api/items/1", ""); code != http.StatusOK {
		t.Fatalf("GET /api/items/1 at level 1: %d %s", code, body)
	}
	if code, _, body := send("POST", "/api/items/2?_method=get", "a=b"); code != http.StatusOK || body != "answer to POST" {
		t.Fatalf("POST /api/items/2 with _method=get at level 1: %d %s, want the upstream's answer to the POST", code, body)
	}
	pin("high")
	down.Store(true)
	if code, cs, _ := send("GET", "/api/items/1", ""); code != http.StatusOK || cs == "" {
		t.Fatalf("GET /api/items/1 at level 2 with the upstream down: %d (Cache-Status %q), want the copy recorded at level 1", code, cs)
	}
	if code, cs, body := send("POST", "/api/items/1?_method=get", "a=b"); code != http.StatusServiceUnavailable || cs != "" {
		t.Errorf("POST /api/items/1 with _method=get at level 2: %d (Cache-Status %q) %q, want the upstream's 503, not the GET's copy", code, cs, body)
	}
	if code, cs, body := send("GET", "/api/items/2", ""); code != http.StatusServiceUnavailable || cs != "" {
		t.Errorf("GET /api/items/2 at level 2: %d (Cache-Status %q) %q, want the upstream's 503: the POST's answer is no copy", code, cs, body)
	}
}

// Forward-auth never sees the body, but the URI it describes carries the
// query: a described POST whose query's _method names DELETE pays what
// DELETE /api/items/{id} costs (3), as with X-HTTP-Method-Override; a
// _method and an override header naming different methods are refused
// with a 400, nothing spent.
func TestForwardAuthJudgesTheQuerysMethodParameter(t *testing.T) {
	f := newFixture(t, overrideConfig)
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "POST",
		"X-Original-URI": "/api/items/1?_method=delete", "X-Forwarded-For": "198.51.100.30"})
	readAll(t, r)
	if rl := r.Header.Get("RateLimit"); r.StatusCode != 200 || !strings.HasPrefix(rl, remaining("0")) {
		t.Errorf("POST /api/items/1?_method=delete: %d RateLimit %q, want 200 and r=0 (a DELETE costs 3)", r.StatusCode, rl)
	}
	r = f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Original-Method": "POST",
		"X-Original-URI": "/api/items/1?_method=delete", "X-HTTP-Method-Override": "PUT", "X-Forwarded-For": "198.51.100.31"})
	if body := readAll(t, r); r.StatusCode != 400 || !strings.Contains(body, "_method") {
		t.Errorf("_method=delete beside X-HTTP-Method-Override: PUT: %d %s, want a 400 naming _method", r.StatusCode, body)
	}
}
