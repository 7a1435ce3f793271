package server_test

import (
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
