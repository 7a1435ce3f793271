package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/client"
)

// shedAnswer is the decision API's answer to a check, as the Go client
// reads it.
type shedAnswer = client.CheckResponse

// check asks f's decision API about body, and decodes its 200.
func (f *fixture) check(t *testing.T, body string) shedAnswer {
	t.Helper()
	r := f.do(t, "POST", "/v1/check", body, nil)
	text := readAll(t, r)
	var a shedAnswer
	if err := json.Unmarshal([]byte(text), &a); r.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("check %s: %d %s (%v)", body, r.StatusCode, text, err)
	}
	return a
}

// wantShedAnswer checks the decision API's answer to a check a degradation
// level shed at level: refused, of the problem type of a temporary
// reduced capacity, with the level's sentence and a wait of
// degradation.retry_after (2 s) that the Go client reads as its Wait, and
// nothing decided (no identity, plan, limits).
func wantShedAnswer(t *testing.T, a shedAnswer, level, what string) {
	t.Helper()
	if a.Allowed || a.Type != "https://iana.org/assignments/http-problem-types#temporary-reduced-capacity" ||
		a.Level != level || !strings.Contains(a.Detail, "overloaded") && !strings.Contains(a.Detail, "under load") {
		t.Errorf("%s: %+v, want a refusal of reduced capacity at level %s", what, a, level)
	}
	if a.RetryAfter != 2 || a.RetryAfterMs != 2000 || a.Wait() != 2*time.Second || a.Headers["Retry-After"] != "2" {
		t.Errorf("%s: retryAfter %d, retryAfterMs %d, Wait %v, headers %v; want 2 s", what, a.RetryAfter, a.RetryAfterMs, a.Wait(), a.Headers)
	}
	if a.Identity != "" || a.Plan != "" || len(a.Limits) != 0 || len(a.Violated) != 0 {
		t.Errorf("%s: %+v: a shed check decides nothing", what, a)
	}
}

// The decision API sheds a check that names an endpoint as the reverse
// proxy sheds a request to it, level by level and class by class: a
// caller gets allowed false, the type of a temporary reduced capacity and
// a wait, in a 200 as any refusal (a 503 reads as "the limiter could not
// decide", which callers may fail open on). Before, every level admitted
// them all. A shed check spends nothing.
func TestDecisionAPIShedsAsTheProxyDoes(t *testing.T) {
	f := newFixture(t, shedConfig)
	level := ""
	for _, c := range shedCases {
		if c.level != level {
			f.pin(t, c.level)
			level = c.level
		}
		what := c.level + ", " + c.method + " " + c.path
		a := f.check(t, `{"subject":"s","method":"`+c.method+`","path":"`+c.path+`"}`)
		if c.shed {
			wantShedAnswer(t, a, c.level, what)
		} else if !a.Allowed || a.Type != "" {
			t.Errorf("%s: %+v, want it admitted, as the proxy admits it", what, a)
		}
	}
	// A query, a host and an escaped path are matched as the proxy
	// matches them.
	f.pin(t, "high")
	wantShedAnswer(t, f.check(t, `{"subject":"s","method":"PATCH","path":"/api/orders/7?x=1","host":"API.example.com"}`), "high", "high, PATCH with a query")
	wantShedAnswer(t, f.check(t, `{"subject":"s","method":"POST","path":"/api%2Fgenerate"}`), "high", "high, an escaped expensive path")

	// 8 checks were shed and 5 admitted (a minute's 500 at a degraded
	// level): back at level 0, the next leaves 994 of the 1000.
	f.pin(t, "normal")
	if a := f.check(t, `{"subject":"s","method":"GET","path":"/api/search"}`); !a.Allowed || a.Remaining != 994 {
		t.Errorf("after the sheds: %+v, want remaining 994: a shed check spends nothing", a)
	}
}

// A check without a method and a path describes no endpoint: no class is
// its (it is neither expensive nor a write), so levels 1 and 2 decide it;
// level 3, which serves nothing but health checks, sheds it. With either
// given, the other's default (GET, /) completes the endpoint.
func TestDecisionAPIKeyChecksAreShedOnlyAtCritical(t *testing.T) {
	f := newFixture(t, strings.Replace(shedConfig, `health: ["GET /health"]`, `health: ["GET /health", "GET /{$}"]`, 1))
	for _, level := range []string{"elevated", "high"} {
		f.pin(t, level)
		if a := f.check(t, `{"subject":"s"}`); !a.Allowed {
			t.Errorf("%s, a key check: %+v, want it decided", level, a)
		}
	}
	f.pin(t, "critical")
	wantShedAnswer(t, f.check(t, `{"subject":"s"}`), "critical", "critical, a key check (though GET / is a health check)")
	if a := f.check(t, `{"subject":"s","path":"/"}`); !a.Allowed {
		t.Errorf("critical, GET / (a health check) by its path: %+v, want it decided", a)
	}
	wantShedAnswer(t, f.check(t, `{"subject":"s","method":"POST"}`), "critical", "critical, POST /")
}
