package httplimit_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Rules keyed by a query parameter and by cookies cost a request as many
// allocations whatever the names of its other parameters and cookies: a
// JSON:API query (filter[status], page[size]), a thousand a[b]
// parameters, and the cookies of ASP.NET Core and Matomo (.AspNetCore.*,
// _pk_id.1.abcd) cost what plain names do, and so does a key of a cookie
// whose name PHP renames (cookie:.AspNetCore.Session).
func TestRuleKeysAllocateNoMoreForBracketedParametersOrDottedCookies(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	cfg := hotPlan(t, 3)
	big := []sluice.Limit{sluice.FixedWindow(1_000_000_000, time.Minute)}
	o := quiet(cfg)
	o.Rules = []httplimit.Rule{
		{Name: "tenants", Paths: []string{"/v1/"}, Key: []string{"query:tenant"}, Limits: big},
		{Name: "sessions", Paths: []string{"/v1/"}, Key: []string{"cookie:sid"}, Limits: big},
		{Name: "aspnet", Paths: []string{"/v1/"}, Key: []string{"cookie:.AspNetCore.Session"}, Limits: big},
	}
	st := memory.New()
	defer st.Close()
	mw, err := httplimit.New(sluice.NewLimiter(st), o)
	if err != nil {
		t.Fatal(err)
	}
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	serve := func(query, cookie string) float64 {
		t.Helper()
		r, _ := http.NewRequest("GET", "http://api.example/v1/items?"+query, nil)
		r.RemoteAddr = "192.0.2.10:41234"
		r.Header.Set("X-API-Key", "the-key")
		r.Header.Set("Cookie", cookie)
		n, w := allocsPerServe(h, r)
		if w.status != 200 {
			t.Fatalf("?%.40s…: status %d", query, w.status)
		}
		return n
	}
	plain := serve("status=open&size=10&number=2&tenant=acme", "_AspNetCore_Session=a; analytics=b; sid=abc")
	for _, c := range []struct{ query, cookie string }{
		{"filter[status]=open&page[size]=10&page[number]=2&tenant=acme", ".AspNetCore.Session=a; _pk_id.1.abcd=b; sid=abc"},
		{strings.Repeat("a[b]=&", 1000) + "tenant=acme", strings.Repeat("a.b=; ", 100) + ".AspNetCore.Session=a; sid=abc"},
	} {
		if n := serve(c.query, c.cookie); n != plain {
			t.Errorf("?%.40s… Cookie: %.40s…: %v allocations per request, %v with plain names", c.query, c.cookie, n, plain)
		}
	}
}
