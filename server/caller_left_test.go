package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/server"
)

// A caller that leaves before its decision (its request's context ends)
// is no failure to decide: through the proxy, forward-auth and the
// decision API alike, sluice_undecided_total stays 0 and nothing reaches
// the upstream. On Redis the store call fails with the context's error,
// which the server must not take for a failure of the store.
func TestCallerThatLeftIsNotUndecided(t *testing.T) {
	eachStore(t, func(t *testing.T, kind string) {
		f := newFixture(t, testConfig, kind)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		send := func(h http.Handler, method, path, body string, header map[string]string) {
			r := httptest.NewRequest(method, path, strings.NewReader(body)).WithContext(gone)
			r.RemoteAddr = "127.0.0.1:5000"
			for k, v := range header {
				r.Header.Set(k, v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
		token := map[string]string{server.TokenHeader: testToken}
		send(f.srv.PublicHandler(), "GET", "/api/items", "", map[string]string{"Authorization": "Bearer demo-free-key"})
		send(f.srv.AdminHandler(), "GET", "/v1/forward-auth", "", map[string]string{server.TokenHeader: testToken, "X-Forwarded-Uri": "/api/items", "X-Forwarded-Method": "GET"})
		send(f.srv.AdminHandler(), "POST", "/v1/check", `{"ip":"192.0.2.1","method":"GET","path":"/api/items"}`, token)
		if got := scrape(t, f.admin.URL)["sluice_undecided_total"]; got != 0 {
			t.Errorf("sluice_undecided_total = %v after three callers that left, want 0", got)
		}
		if n := f.hits.Load(); n != 0 {
			t.Errorf("%d requests of a client that left reached the upstream", n)
		}
	})
}
