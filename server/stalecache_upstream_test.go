package server_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

const staleUpstreamConfig = `
plans:
  free:
    limits: [{name: per-minute, algorithm: gcra, quantity: 1000, window: 1m}]
default_plan: free
anonymous_plan: free
identity:
  trusted_proxies: [127.0.0.1/32]
degradation:
  stale_for: 30s
  levels:
    elevated: {enter: {in_flight: 1000}, leave: {in_flight: 900}}
`

type staleUpstream struct {
	f    *fixture
	hits *atomic.Int64
}

func newStaleUpstream(t *testing.T, up http.HandlerFunc) staleUpstream {
	var hits atomic.Int64
	f := newFixtureOn(t, staleUpstreamConfig, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		up(w, r)
	}))
	return staleUpstream{f: f, hits: &hits}
}

func (a staleUpstream) get(t *testing.T, method, path string, header ...string) (status int, body string, h http.Header, fresh bool) {
	t.Helper()
	req, _ := http.NewRequest(method, a.f.http.URL+path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	before := a.hits.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", nil, a.hits.Load() > before
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header, a.hits.Load() > before
}

// A response that sets a cookie is never kept (docs/decisions.md): it is
// another client's session. Any Set-Cookie field counts, whatever its
// lines hold: an empty first line does not hide a session cookie after it.
func TestStaleCacheKeepsNoAnswerWithASetCookieField(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Set-Cookie"] = []string{"", "session=" + r.Header.Get("X-Who")}
		w.Write([]byte("hello"))
	})
	a.f.pin(t, "elevated")
	if st, _, h, _ := a.get(t, "GET", "/page", "X-Who", "alice-secret"); st != 200 || len(h.Values("Set-Cookie")) < 2 {
		t.Fatalf("recording: %d %q", st, h.Values("Set-Cookie"))
	}
	a.f.pin(t, "high")
	_, _, h, fresh := a.get(t, "GET", "/page", "X-Who", "bob")
	if !fresh {
		t.Errorf("an anonymous client was served another's copy that sets a cookie: Set-Cookie %q", h.Values("Set-Cookie"))
	}
}

// RFC 9111 5.2.2.10: s-maxage incorporates proxy-revalidate for a shared
// cache, which the stale cache is (anonymous clients share copies): a
// response of s-maxage may not be served stale, so it is not kept.
func TestStaleCacheKeepsNoAnswerOfSMaxage(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, s-maxage=1")
		w.Write([]byte("hello"))
	})
	a.f.pin(t, "elevated")
	a.get(t, "GET", "/page")
	a.f.clock.Advance(10 * time.Second)
	a.f.pin(t, "high")
	if _, _, h, fresh := a.get(t, "GET", "/page"); !fresh {
		t.Errorf("a copy 10s old of a response of s-maxage=1 was served stale (Age %s)", h.Get("Age"))
	}
}

// RFC 9111 5.2.1.5: a request's no-store forbids a cache to store the
// response to it: the answer is not kept, and the next request reaches
// the upstream.
func TestStaleCacheKeepsNoAnswerToANoStoreRequest(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("account balance 42"))
	})
	a.f.pin(t, "elevated")
	a.get(t, "GET", "/account", "Authorization", "Bearer alice", "Cache-Control", "no-store")
	a.f.pin(t, "high")
	if _, body, _, fresh := a.get(t, "GET", "/account", "Authorization", "Bearer alice"); !fresh {
		t.Errorf("the answer to a request of Cache-Control: no-store was kept and served: %q", body)
	}
}

// RFC 9111 5.1 and 4.2.3: a cache's Age is its estimate of the time since
// the origin made the response: the Age the response came with plus the
// time the cache held it. A copy of an answer that came with Age: 100
// (the upstream is itself a cache), held 10 s, says Age: 110, so that a
// cache in front of sluice keeps it no longer than its max-age allows.
// RFC 9211 2: each cache adds its Cache-Status entry after those of the
// caches before it: the copy keeps the upstream's and adds sluice's last.
func TestStaleCopiesAgeFromTheUpstreamsAgeAndAddTheirCacheStatus(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=120")
		w.Header().Set("Age", "100")
		w.Header().Set("Cache-Status", "origin-cache; hit")
		w.Write([]byte("hello"))
	})
	a.f.pin(t, "elevated")
	a.get(t, "GET", "/page")
	a.f.clock.Advance(10 * time.Second)
	a.f.pin(t, "high")
	_, _, h, fresh := a.get(t, "GET", "/page")
	if fresh {
		t.Fatal("not served from the stale cache")
	}
	if age, _ := strconv.Atoi(h.Get("Age")); age != 110 {
		t.Errorf("a copy held 10 s of an answer of Age: 100 says Age: %s, want 110", h.Get("Age"))
	}
	want := []string{"origin-cache; hit", "sluice; hit; detail=stale-while-degraded"}
	if got := h.Values("Cache-Status"); !slices.Equal(got, want) {
		t.Errorf("Cache-Status %q, want %q", got, want)
	}
}

// The stale cache keys a copy by every forwarding header that describes
// the request and that the proxy passes on from a trusted peer (forward:
// X-Forwarded-Host, -Proto, -Prefix, -Port, -Scheme, -Ssl, X-Original-URL…,
// which frameworks build links or route by), so that a copy answers only
// the same request: one anonymous request with X-Forwarded-Prefix:
// https://evil.example, or X-Original-URL: /admin, recorded at level 1,
// is never what other anonymous clients of that URL are answered at
// level 2 (web cache poisoning).
func TestStaleCopiesAreKeyedByTheForwardingHeadersTheUpstreamReads(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if o := r.Header.Get("X-Original-Url"); o != "" {
			path = o // Symfony, IIS
		}
		w.Write([]byte(`<a href="` + r.Header.Get("X-Forwarded-Prefix") + `/next">page ` + path + `</a>`))
	})
	a.f.pin(t, "elevated")
	a.get(t, "GET", "/page", "X-Forwarded-Prefix", "https://evil.example")
	a.get(t, "GET", "/home", "X-Original-Url", "/admin")
	a.f.pin(t, "high")
	for _, path := range []string{"/page", "/home"} {
		if _, body, _, fresh := a.get(t, "GET", path); !fresh {
			t.Errorf("an anonymous GET %s without forwarding headers was answered another's copy: %q", path, body)
		}
	}
	if _, body, _, fresh := a.get(t, "GET", "/page", "X-Forwarded-Prefix", "https://evil.example"); fresh {
		t.Errorf("the same request, with the same X-Forwarded-Prefix, was not answered its copy: %q", body)
	}
}

// A copy answers only requests with the values of the headers its
// response varies by (docs/decisions.md), which the cache reads from the
// request as received. sluice sets, rewrites or removes some on the way
// to the upstream (forward: X-Real-IP is the client's address,
// X-Forwarded-For gets the peer): an answer that varies by one of those
// is not kept, so an upstream that answers by X-Real-IP and says so
// (Vary: X-Real-IP) never has one anonymous client's answer served to
// another at level 2.
func TestStaleCacheKeepsNoAnswerThatVariesByAHeaderSluiceRewrites(t *testing.T) {
	a := newStaleUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "X-Real-Ip")
		w.Write([]byte("your address is " + r.Header.Get("X-Real-Ip")))
	})
	a.f.pin(t, "elevated")
	_, first, _, _ := a.get(t, "GET", "/whoami", "X-Forwarded-For", "203.0.113.1")
	a.f.pin(t, "high")
	if _, body, _, fresh := a.get(t, "GET", "/whoami", "X-Forwarded-For", "198.51.100.2"); !fresh {
		t.Errorf("the client at 198.51.100.2 was answered the copy of the client at 203.0.113.1's answer (%q), which varies by X-Real-IP: %q", first, body)
	}
}
