package server_test

import (
	"testing"

	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/overlimit"
	"github.com/sluice-dev/sluice/server"
)

const cachedRefusalConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-second, algorithm: fixed-window, quantity: 1, window: 1s}
rules:
  - name: uploads
    match: {paths: [/upload]}
    limits: [{name: uploads, algorithm: fixed-window, quantity: 100, window: 1d}]
`

// A check that the over-limit cache in front of the store refuses by the
// plan's remembered refusal never evaluated the uploads rule's limit: its
// headers state no RateLimit item of it (not r=0, nothing left, while the
// store holds all 100), as the proxy's do; limits[] keeps its place, not
// refusing, its figures the status's stand-ins (docs/api.md).
func TestACheckTheCacheRefusesStatesNoFiguresOfALimitItDidNotEvaluate(t *testing.T) {
	f := newFixtureWith(t, cachedRefusalConfig, func(o *server.Options) {
		cache := overlimit.New(o.Store, overlimit.Options{Clock: o.Clock})
		o.Store, o.OverLimit = cache, cache
	})
	check := func(path string) client.CheckResponse {
		t.Helper()
		var out client.CheckResponse
		decode(t, f.do(t, "POST", "/v1/check", `{"subject":"s","method":"GET","path":"`+path+`"}`, nil), &out)
		return out
	}
	check("/api/search")
	if out := check("/api/search"); out.Allowed {
		t.Fatal("the second check within a second was admitted")
	}
	out := check("/upload")
	if out.Allowed || out.Limit != "per-second" || len(out.Limits) != 2 {
		t.Fatalf("the check of /upload: %+v; want refused by per-second, two limits", out)
	}
	if got, want := out.Headers["Ratelimit"], `"per-second";r=0;t=1`; got != want {
		t.Errorf("headers' RateLimit: %s, want %s", got, want)
	}
	if got := out.Limits[1]; got.Name != "uploads.uploads" || !got.Allowed || got.RetryAfterMs != 0 {
		t.Errorf("limits[1]: %+v, want uploads.uploads not refusing", got)
	}
}
