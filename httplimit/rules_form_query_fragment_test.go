package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// A form: or json: key reads the query parameter of its name too
// (docs/rules.md; Laravel's input(), PHP's $_REQUEST), and reads the query
// as a query: key does: Go's server keeps a "#" a client sends in the
// query, while nginx, PHP, Express, Puma and gunicorn end the query there,
// so "username=victim#1" is victim's attempt. Read as the value
// "victim#1", each attempt "#N" would get a fresh count: a
// credential-stuffing run against one account never limited.
func TestABodyKeyReadsTheQueryBeforeAFragment(t *testing.T) {
	for _, c := range []struct{ key, param, contentType, body string }{
		{"form:username", "username", formType, "password=guess"},
		{"json:email", "email", "application/json", `{"password":"guess"}`},
	} {
		mw, _ := rulesMiddleware(t, loginRule(c.key))
		h := mw.Handler(okHandler())
		var got []int
		for i, q := range []string{"=victim", "=victim#1", "=victim#2"} {
			r := httptest.NewRequest(http.MethodPost, "/login?"+c.param+q, strings.NewReader(c.body))
			r.Header.Set("Content-Type", c.contentType)
			r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1", i+1)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got = append(got, w.Code)
		}
		if want := []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: victim's attempts, then with #1 and #2 after the query: %v, want %v", c.key, got, want)
		}
	}
}
