package server_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// checkOverrideConfig charges a DELETE under /api/items/ 5 units of a plan
// of 100 a minute, any other request 1.
const checkOverrideConfig = `
identity:
  trusted_proxies: [127.0.0.1/32]
plans:
  free:
    limits:
      - {name: per-minute, algorithm: fixed-window, quantity: 100, window: 1m}
    costs: {"DELETE /api/items/": 5}
`

// overrideCase describes a POST /api/items/x… to the three surfaces: uri is
// its request URI, header its headers (besides the client's address),
// form a form body the proxy is sent (forward-auth and the decision API
// describe none).
type overrideCase struct {
	name   string
	uri    string
	header map[string]string
	form   string
}

// overrideOutcome is how one surface judged a case: its status (a shed
// check's 200 refusal read as the 503 the proxy answers it) and the
// per-minute limit's remaining quota after it; after a 400, what a plain
// GET by the same client then leaves, which shows what the 400 spent.
type overrideOutcome struct {
	status    int
	remaining string
}

var rateLimitRemaining = regexp.MustCompile(`"per-minute";r=(\d+)`)

// judgeOverrideOn sends c to the reverse proxy, forward-auth and the
// decision API of f, each as a client of its own (198.51.{1,2,3}.n), and
// returns their outcomes in that order.
func judgeOverrideOn(t *testing.T, f *fixture, c overrideCase, n int) [3]overrideOutcome {
	t.Helper()
	var out [3]overrideOutcome
	fromHeader := func(s *overrideOutcome, status int, rl string) {
		s.status, s.remaining = status, ""
		if m := rateLimitRemaining.FindStringSubmatch(rl); m != nil {
			s.remaining = m[1]
		}
	}
	// The reverse proxy.
	addr := fmt.Sprintf("198.51.1.%d", n)
	h := maps.Clone(c.header)
	if h == nil {
		h = map[string]string{}
	}
	h["X-Forwarded-For"] = addr
	if c.form != "" {
		h["Content-Type"] = "application/x-www-form-urlencoded"
	}
	r := f.do(t, "POST", c.uri, c.form, h)
	readAll(t, r)
	fromHeader(&out[0], r.StatusCode, r.Header.Get("RateLimit"))
	if r.StatusCode == 400 {
		r = f.do(t, "GET", "/api/items/x", "", map[string]string{"X-Forwarded-For": addr})
		readAll(t, r)
		fromHeader(&out[0], 400, r.Header.Get("RateLimit"))
	}
	// Forward-auth.
	addr = fmt.Sprintf("198.51.2.%d", n)
	h = maps.Clone(c.header)
	if h == nil {
		h = map[string]string{}
	}
	h["X-Forwarded-For"], h["X-Forwarded-Method"], h["X-Forwarded-Uri"] = addr, "POST", c.uri
	r = f.do(t, "GET", "/v1/forward-auth", "", h)
	readAll(t, r)
	fromHeader(&out[1], r.StatusCode, r.Header.Get("RateLimit"))
	if r.StatusCode == 400 {
		r = f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-For": addr, "X-Forwarded-Method": "GET", "X-Forwarded-Uri": "/api/items/x"})
		readAll(t, r)
		fromHeader(&out[1], 400, r.Header.Get("RateLimit"))
	}
	// The decision API.
	addr = fmt.Sprintf("198.51.3.%d", n)
	headers, _ := json.Marshal(c.header)
	st, m, raw := postCheck(t, f, `{"ip":"`+addr+`","method":"POST","path":"`+c.uri+`","headers":`+string(headers)+`}`)
	switch {
	case st == 400:
		_, m, raw = postCheck(t, f, `{"ip":"`+addr+`","path":"/api/items/x"}`)
	case st == 200 && m["allowed"] == false && m["type"] != nil && m["limits"] == nil:
		st = 503 // shed
	}
	out[2].status = st
	if v, ok := m["remaining"].(float64); ok {
		out[2].remaining = strconv.Itoa(int(v))
	} else if st != 503 {
		t.Errorf("%s: /v1/check: %s, want a decision", c.name, raw)
	}
	return out
}

// docs/api.md: the decision API applies the same plans and costs as the
// proxy, and its path is checked and read as forward-auth checks and reads
// its URI. Laravel serves a POST whose query's _method names DELETE as the
// DELETE (docs/decisions.md), and the proxy and forward-auth judge it so,
// at the DELETE's cost of 5, or refuse it with a 400, nothing spent, where
// the configuration judges neither method alone; so does /v1/check, or a
// service that asks it would serve the expensive endpoint at the cheap
// price of a POST. The override headers (X-HTTP-Method-Override,
// X-HTTP-Method, X-Method-Override, in any spelling) of a check's headers
// are judged as forward-auth judges them, the request being the one the
// service serves; the reverse proxy removes them from the request it
// passes on, so that its upstream serves, and it charges, the POST. No
// surface reads a _method of a body: the proxy charges a form's as the
// POST it is sent as, forward-auth never sees a body, and a check
// describes none, so each judges it as the POST.
func TestCheckJudgesAMethodOverrideAsForwardAuthDoes(t *testing.T) {
	override := map[string]string{"X-HTTP-Method-Override": "DELETE"}
	type want struct {
		status    int
		remaining string
	}
	for _, c := range []struct {
		cfg string // a change to checkOverrideConfig's costs
		overrideCase
		want  want
		proxy want // the proxy's, when it differs (it removes the header)
	}{
		{overrideCase: overrideCase{name: "the query's _method", uri: "/api/items/x?_method=DELETE"}, want: want{200, "95"}},
		{overrideCase: overrideCase{name: "the query's _method as PHP names it", uri: "/api/items/x?.METHOD=delete"}, want: want{200, "95"}},
		{overrideCase: overrideCase{name: "a form body's _method", uri: "/api/items/x", form: "_method=DELETE"}, want: want{200, "99"}},
		{overrideCase: overrideCase{name: "X-HTTP-Method-Override", uri: "/api/items/x", header: override}, want: want{200, "95"},
			proxy: want{200, "99"}},
		{overrideCase: overrideCase{name: "X_Method_Override", uri: "/api/items/x", header: map[string]string{"X_Method_Override": "delete"}},
			want: want{200, "95"}, proxy: want{200, "99"}},
		{overrideCase: overrideCase{name: "X-HTTP-Method beside a _method that differs", uri: "/api/items/x?_method=DELETE",
			header: map[string]string{"X-HTTP-Method": "PUT"}}, want: want{400, "99"}, proxy: want{200, "95"}},
		{overrideCase: overrideCase{name: "two _methods that differ", uri: "/api/items/x?_method=DELETE&_method=PUT"}, want: want{400, "99"}},
		{overrideCase: overrideCase{name: "a _method that is no method", uri: "/api/items/x?_method=DEL%20ETE"}, want: want{400, "99"}},
		{overrideCase: overrideCase{name: "a _method as strict as the POST", uri: "/api/items/x?_method=GET"}, want: want{200, "99"}},
		{cfg: `"POST /api/": 2`, overrideCase: overrideCase{name: "a _method neither method alone judges", uri: "/api/items/x?_method=DELETE"},
			want: want{400, "99"}},
		{cfg: `"POST /api/": 2`, overrideCase: overrideCase{name: "a _method laxer than the POST", uri: "/api/items/x?_method=GET"},
			want: want{200, "98"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := checkOverrideConfig
			if c.cfg != "" {
				cfg = strings.Replace(cfg, `"DELETE /api/items/": 5`, `"DELETE /api/items/": 5, `+c.cfg, 1)
			}
			got := judgeOverrideOn(t, newFixture(t, cfg), c.overrideCase, 1)
			proxy := c.want
			if c.proxy.status != 0 {
				proxy = c.proxy
			}
			for i, w := range []want{proxy, c.want, c.want} {
				if g := got[i]; g.status != w.status || g.remaining != w.remaining {
					t.Errorf("%s: %d, remaining %s; want %d, remaining %s", [...]string{"proxy", "forward-auth", "/v1/check"}[i],
						g.status, g.remaining, w.status, w.remaining)
				}
			}
		})
	}
}

// The degradation classes judge an overridden check as forward-auth
// judges the request: by the classes of either method. DELETE /api/items/
// is expensive, so level 1 sheds a POST that names it, through each
// surface; the proxy removes an override header, and passes the POST it
// then is.
func TestCheckShedsAMethodOverrideAsForwardAuthDoes(t *testing.T) {
	f := newFixture(t, checkOverrideConfig+`degradation:
  retry_after: 2s
  levels:
    elevated: {enter: {in_flight: 400}, leave: {in_flight: 200}}
  classes:
    expensive: ["DELETE /api/items/"]
`)
	f.pin(t, "elevated")
	for i, c := range []struct {
		overrideCase
		proxy int
	}{
		{overrideCase{name: "the query's _method", uri: "/api/items/x?_method=DELETE"}, 503},
		{overrideCase{name: "X-HTTP-Method-Override", uri: "/api/items/x", header: map[string]string{"X-HTTP-Method-Override": "DELETE"}}, 200},
	} {
		got := judgeOverrideOn(t, f, c.overrideCase, i+1)
		if got[0].status != c.proxy || got[1].status != 503 || got[2].status != 503 {
			t.Errorf("%s at level 1: proxy %d, forward-auth %d, /v1/check %d; want %d, 503 and a shed check",
				c.name, got[0].status, got[1].status, got[2].status, c.proxy)
		}
	}
}
