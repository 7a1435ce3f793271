package httplimit

import (
	"net/http/httptest"
	"testing"
)

// A plan's cost of an endpoint charges it under a format suffix too, as
// Rails routes /v1/login.json to /v1/login's action, while the path as
// written keeps the cost of the most specific pattern it matches: the
// reading without the suffix counts only under a pattern the suffix steps
// off (GET /v1/openapi.json costs its own 0, not the 3 of /v1/, which the
// path as written is costed under already; GET /robots.txt its 0, /robots
// matching no pattern).
func TestACostHoldsUnderAFormatSuffix(t *testing.T) {
	e, err := newEndpoints(nil, map[string]int64{"POST /v1/login": 5, "GET /v1/": 3, "GET /v1/openapi.json": 0,
		"GET /robots.txt": 0, "GET /files/{name}": 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, target string
		want           int64
	}{
		{"POST", "/v1/login", 5},
		{"POST", "/v1/login.json", 5},
		{"POST", "/v1/login.xml/", 5},
		{"POST", "/v1/login.json;x=1", 5},
		{"POST", "/V1/LOGIN.JSON", 5},
		{"POST", "/v1/login.tar.gz", 1},
		{"GET", "/v1/openapi.json", 0},
		{"GET", "/v1/items.json", 3},
		{"GET", "/robots.txt", 0},
		{"GET", "/files/a.json", 2},
	} {
		if got := e.cost(httptest.NewRequest(c.method, c.target, nil)); got != c.want {
			t.Errorf("%s %s: cost %d, want %d", c.method, c.target, got, c.want)
		}
	}
}
