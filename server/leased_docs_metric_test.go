package server_test

import (
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// serveLeased returns a server on a Redis store that leases every bucket
// (store.redis.lease: auto), configured by the YAML of plans, rules and
// global limits conf; without the over-limit cache in front of Redis when
// noCache is true.
func serveLeased(t *testing.T, conf string, noCache bool) *server.Server {
	t.Helper()
	cfg, opened := openLeasing(t, conf)
	o := server.Options{Config: cfg, Store: opened.Store, Ready: opened.Ready,
		Failover: opened.Failover, OverLimit: opened.Cache, Leases: opened.Leases,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if noCache {
		o.OverLimit = nil
	}
	srv, err := server.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// With store.redis.lease: auto a token bucket of 100 per 100 s admits at
// most its shared burst, 75, at once, and its RateLimit headers state
// q=75. The client documentation page, generated from the live
// configuration for those same clients, tells the same: a plan's bucket
// and a rule's are "bursts of up to 75", and the example headers, which
// the real limiter produces, state q=75;w=75 and what remains of 75 after
// a request, as the live server does.
func TestTheDocsPageStatesALeasedBucketsSharedBurst(t *testing.T) {
	srv := serveLeased(t, "plans:\n  free:\n    limits:\n"+
		"      - {name: bucket, algorithm: token-bucket, quantity: 100, window: 100s}\n"+
		"rules:\n  - name: search\n    match: {paths: [/search]}\n"+
		"    limits: [{name: burst, algorithm: token-bucket, quantity: 100, window: 100s}]\n", false)
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/a", nil)
	r.RemoteAddr = "198.51.100.7:1234"
	srv.PublicHandler().ServeHTTP(w, r)
	policy, state := w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit")
	if policy != `"bucket";q=75;w=75` || !strings.HasPrefix(state, `"bucket";r=74;`) {
		t.Fatalf("RateLimit-Policy %q, RateLimit %q; want the shared burst, 75, stated (the premise)", policy, state)
	}

	w = httptest.NewRecorder()
	r = httptest.NewRequest("GET", "/docs", nil)
	r.Header.Set(server.TokenHeader, testToken)
	srv.AdminHandler().ServeHTTP(w, r)
	page := html.UnescapeString(w.Body.String())
	if w.Code != 200 {
		t.Fatalf("/docs: %d", w.Code)
	}
	if n := strings.Count(page, "bursts of up to 75"); n != 2 || strings.Contains(page, "bursts of up to 100") {
		i := strings.Index(page, "bursts of up to")
		t.Errorf("/docs tells %d limits of \"bursts of up to 75\", want the plan's and the rule's; it begins %q",
			n, page[max(i, 0):min(len(page), max(i, 0)+40)])
	}
	if !strings.Contains(page, "Ratelimit-Policy: "+policy+"\n") || !strings.Contains(page, `Ratelimit: "bucket";r=74;`) {
		i := strings.Index(page, "Ratelimit-Policy:")
		t.Errorf("/docs example headers begin %q; the live server sends RateLimit-Policy %q and RateLimit %q",
			page[max(i, 0):min(len(page), max(i, 0)+80)], policy, state)
	}
}

// With store.redis.lease: auto, a global token bucket of 100 per 100 s
// admits at most 75 at once. Once requests have spent it (every further
// one refused), sluice_global_remaining_ratio, the share of the burst the
// shared state decides by that is left, says next to nothing is: below
// the tenth at which SluiceGlobalLimitNearExhaustion fires. Untouched, it
// is 1. So it is whether the scrape peeks through the over-limit cache,
// in front of Redis alone, or through the store and its leases.
func TestTheGlobalRatioOfASpentLeasedBucketIsNearZero(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		t.Run(fmt.Sprintf("noCache=%v", noCache), func(t *testing.T) { testGlobalRatioOfASpentLeasedBucket(t, noCache) })
	}
}

func testGlobalRatioOfASpentLeasedBucket(t *testing.T, noCache bool) {
	srv := serveLeased(t, "plans:\n  free:\n    limits:\n"+
		"      - {name: own, algorithm: fixed-window, quantity: 100000, window: 1h}\n"+
		"global:\n  - {name: everyone, algorithm: token-bucket, quantity: 100, window: 100s}\n", noCache)
	ratio := func() float64 {
		t.Helper()
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/metrics", nil)
		r.Header.Set(server.TokenHeader, testToken)
		srv.AdminHandler().ServeHTTP(w, r)
		m := regexp.MustCompile(`sluice_global_remaining_ratio\{limit="everyone"\} (\S+)`).FindStringSubmatch(w.Body.String())
		if m == nil {
			t.Fatalf("/metrics %d lacks sluice_global_remaining_ratio for everyone", w.Code)
		}
		v, _ := strconv.ParseFloat(m[1], 64)
		return v
	}
	if v := ratio(); v != 1 {
		t.Errorf("untouched: sluice_global_remaining_ratio %v, want 1", v)
	}
	admitted := 0
	for i := range 150 {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/a", nil)
		r.RemoteAddr = fmt.Sprintf("198.51.100.%d:1234", i+1)
		srv.PublicHandler().ServeHTTP(w, r)
		if w.Code == 200 {
			admitted++
		}
	}
	if admitted > 80 {
		t.Fatalf("admitted %d of 150 at once, want the shared burst, about 75 (the premise)", admitted)
	}
	if v := ratio(); v >= 0.1 {
		t.Errorf("admitted %d, the rest refused; sluice_global_remaining_ratio %v, want below 0.1", admitted, v)
	}
}
