package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// A POST whose _method names another method is shed when the degradation
// classes of either method would shed it (docs/rules.md, Method
// overrides): Laravel serves POST /api/items/1 with _method=DELETE as the
// DELETE, an expensive endpoint here, which level 1 sheds. The proxy reads
// the _method of a configuration whose classes alone name a method.
func TestAPostNamingAnExpensiveMethodIsShed(t *testing.T) {
	cfg := strings.Replace(degradeConfig, `expensive: ["POST /api/generate"]`, `expensive: ["DELETE /api/items/{id}"]`, 1)
	_, l := startDegradingWith(t, cfg)
	base, admin := "http://"+l.public, "http://"+l.admin
	pinLevel(t, admin, "elevated")
	if code, _ := status(t, "DELETE", base+"/api/items/1"); code != 503 {
		t.Fatalf("level 1, DELETE /api/items/1 (expensive): %d, want 503", code)
	}
	if code, _ := status(t, "POST", base+"/api/items/1?_method=DELETE"); code != 503 {
		t.Errorf("level 1, POST /api/items/1?_method=DELETE, which Laravel serves as the expensive DELETE: %d, want 503 as the DELETE is", code)
	}
}

// So is one judged as the POST it is (a POST costs more than the GET its
// _method names): the GET's expensive class sheds it too.
func TestAPostJudgedAsThePostIsShedByTheClassOfTheMethodItNames(t *testing.T) {
	cfg := strings.Replace(degradeConfig, `expensive: ["POST /api/generate"]`, `expensive: ["GET /api/report"]`, 1)
	cfg = strings.Replace(cfg, `      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}`,
		`      - {name: per-second, algorithm: gcra, quantity: 100000, window: 1s}
    costs: {"POST /api/": 2}`, 1)
	_, l := startDegradingWith(t, cfg)
	base, admin := "http://"+l.public, "http://"+l.admin
	pinLevel(t, admin, "elevated")
	if code, _ := status(t, "POST", base+"/api/report?_method=GET"); code != 503 {
		t.Errorf("level 1, POST /api/report?_method=GET, which Laravel serves as the expensive GET: %d, want 503", code)
	}
}

// Forward-auth and the decision API shed such a POST as the proxy does:
// judged as the POST (which costs more than the GET its _method names),
// it is still the GET that Laravel serves, and the GET's expensive class
// sheds it at level 1, nothing spent.
func TestAPostJudgedAsThePostIsShedByTheClassOfTheMethodItNamesOnEverySurface(t *testing.T) {
	cfg := strings.Replace(shedConfig, `expensive: ["POST /api/generate"]`, `expensive: ["GET /api/report"]`, 1)
	cfg = strings.Replace(cfg, `      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}`,
		`      - {name: per-minute, algorithm: fixed-window, quantity: 1000, window: 1m}
    costs: {"POST /api/": 2}`, 1)
	f := newFixture(t, cfg)
	f.pin(t, "elevated")
	wantShed(t, f.forwardAuth(t, "POST", "/api/report?_method=GET", "203.0.113.5"), http.StatusServiceUnavailable,
		"forward-auth, elevated, POST /api/report?_method=GET")
	r := f.do(t, "GET", "/v1/forward-auth", "", map[string]string{"X-Forwarded-Method": "POST", "X-Forwarded-Uri": "/api/report",
		"X-HTTP-Method-Override": "GET", "X-Forwarded-For": "203.0.113.5"})
	wantShed(t, r, http.StatusServiceUnavailable, "forward-auth, elevated, POST /api/report with X-HTTP-Method-Override: GET")
	for _, body := range []string{
		`{"ip":"203.0.113.6","method":"POST","path":"/api/report?_method=GET"}`,
		`{"ip":"203.0.113.6","method":"POST","path":"/api/report","headers":{"X-HTTP-Method-Override":"GET"}}`,
	} {
		st, m, raw := postCheck(t, f, body)
		if st != 200 || m["allowed"] != false || m["level"] != "elevated" || m["limits"] != nil {
			t.Errorf("/v1/check %s at level 1: %d %s, want the shed refusal of the GET's expensive class", body, st, raw)
		}
	}
	// Nothing was spent: back at level 0, a GET leaves 999 of 1000.
	f.pin(t, "normal")
	r = f.forwardAuth(t, "GET", "/api/search", "203.0.113.5")
	if got := r.Header.Get("RateLimit"); r.StatusCode != 200 || got != `"per-minute";r=999;t=60` {
		t.Errorf("after the sheds: %d, RateLimit %q, want r=999: a shed request spends nothing", r.StatusCode, got)
	}
}
