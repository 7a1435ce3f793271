package server_test

import (
	"bytes"
	"strings"
	"testing"
)

// Every request a degradation level sheds is logged, whichever surface
// shed it, as refusals are (within log.refusals_per_second): the surface,
// the status written, the level, the method and path without the query,
// and the request's X-Request-Id. An operator who pinned a level reads
// what it refused, and where; before, no shed was logged at all.
func TestShedRequestsAreLogged(t *testing.T) {
	var logs bytes.Buffer
	f := loggedFixture(t, shedConfig, &logs)
	f.pin(t, "critical")
	if r := f.do(t, "GET", "/api/search?token=secret", "", map[string]string{"X-Request-Id": "req-1"}); r.StatusCode != 503 {
		t.Fatalf("proxy: %d", r.StatusCode)
	}
	if r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST",
		"X-Forwarded-Uri": "/api/pay?token=secret", "X-Request-Id": "req-2"}); r.StatusCode != 503 {
		t.Fatalf("forward-auth: %d", r.StatusCode)
	}
	if a := f.check(t, `{"subject":"s","method":"DELETE","path":"/api/orders/7?token=secret"}`); a.Allowed {
		t.Fatalf("decision API: %+v", a)
	}
	if a := f.check(t, `{"subject":"s"}`); a.Allowed {
		t.Fatalf("decision API, a key check: %+v", a)
	}
	var lines []string
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, `msg="request shed"`) {
			lines = append(lines, l[strings.Index(l, "msg="):])
		}
	}
	want := []string{
		`msg="request shed" via=proxy status=503 level=critical method=GET path=/api/search request_id=req-1`,
		`msg="request shed" via=forward-auth status=503 level=critical method=POST path=/api/pay request_id=req-2`,
		`msg="request shed" via=decision-api level=critical method=DELETE path=/api/orders/7`,
		`msg="request shed" via=decision-api level=critical`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("shed lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(logs.String(), "secret") {
		t.Errorf("a query was logged:\n%s", logs.String())
	}
}
