package httplimit_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// echoBody answers what it read of the request's body.
func echoBody() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		w.Write(b)
	})
}

// post sends body as contentType from addr through h and returns the answer.
func post(h http.Handler, addr, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
	r.RemoteAddr = addr + ":1234"
	r.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Login attempts counted per username from the form body, whatever the
// address they come from and however the name is cased; the upstream gets
// every body whole.
func TestRuleKeyedByAFormField(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{"form:username"}, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
	h := mw.Handler(echoBody())
	const form = "application/x-www-form-urlencoded"
	var got []int
	for i, addr := range []string{"192.0.2.1", "192.0.2.2", "198.51.100.7", "203.0.113.9"} {
		name := []string{"alice", "Alice", "ALICE", "alice"}[i]
		body := "username=" + name + "&password=guess" + fmt.Sprint(i)
		w := post(h, addr, form, body)
		got = append(got, w.Code)
		if w.Code == 200 && w.Body.String() != body {
			t.Errorf("the upstream read %q, want %q", w.Body.String(), body)
		}
	}
	got = append(got, post(h, "192.0.2.1", form, "username=bob&password=x").Code)
	if want := []int{200, 200, 200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("alice from four addresses, then bob: %v, want %v", got, want)
	}
	// A body without the field or of another type has no username: the
	// rule falls back to the client's address. One longer than the bound
	// counts with the unreadable ones (~), a count of its own here.
	big := "username=alice&pad=" + strings.Repeat("x", httplimit.MaxKeyBody)
	for _, c := range []struct{ name, contentType, body string }{
		{"no field", form, "user=alice"},
		{"another type", "text/plain", "username=alice"},
		{"over the bound", form, big},
	} {
		w := post(h, "203.0.113.50", c.contentType, c.body)
		if w.Code != 200 || w.Body.String() != c.body {
			t.Errorf("%s: %d, upstream read %d bytes of %d", c.name, w.Code, w.Body.Len(), len(c.body))
		}
	}
}

// A JSON body's field, by a path of names, keys a rule as a form field does.
func TestRuleKeyedByAJSONField(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Paths: []string{"/login"},
		Key: []string{"json:user.email"}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	h := mw.Handler(echoBody())
	var got []int
	for i, body := range []string{
		`{"user":{"email":"Ann@example.com"},"password":"1"}`,
		`{"user":{"email":"ann@example.com"},"password":"2"}`,
		`{"password":"3","user":{"email":"ANN@EXAMPLE.COM"}}`,
		`{"user":{"email":"bo@example.com"}}`,
	} {
		w := post(h, fmt.Sprintf("192.0.2.%d", i+1), "application/json; charset=utf-8", body)
		got = append(got, w.Code)
		if w.Code == 200 && w.Body.String() != body {
			t.Errorf("the upstream read %q, want %q", w.Body.String(), body)
		}
	}
	if want := []int{200, 200, 429, 200}; !slices.Equal(got, want) {
		t.Errorf("ann ×3 in any case, then bo: %v, want %v", got, want)
	}
	// Not an object, a field that is an object: absent, each falls back to
	// its own address; malformed JSON counts with the unreadable ones (~).
	for i, body := range []string{`["ann@example.com"]`, `{"user":{"email":{"a":1}}}`, `{"user":`} {
		if w := post(h, fmt.Sprintf("198.51.100.%d", i+1), "application/json", body); w.Code != 200 || w.Body.String() != body {
			t.Errorf("%s: %d %q", body, w.Code, w.Body.String())
		}
	}
}

func TestRuleBodyKeysValidate(t *testing.T) {
	for key, want := range map[string]string{
		"form:":          "a form field name of 1 to 64",
		"form:user name": "a form field name of 1 to 64",
		"json:":          "a JSON field path of 1 to 4 names",
		"json:a..b":      "a JSON field path",
		"json:a.b.c.d.e": "a JSON field path",
		"formdata:user":  "is not a key attribute",
	} {
		err := httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.FixedWindow(10, time.Minute)}}},
			Rules: []httplimit.Rule{{Name: "r", Key: []string{key}, Limits: []sluice.Limit{sluice.FixedWindow(1, time.Minute)}}}}.Validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("key %q: %v, want %q", key, err, want)
		}
	}
}

// Whatever the body and its type, a rule keyed by its fields decides
// without failing and the handler reads the body exactly as it was sent.
func FuzzRuleBodyKey(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", "username=alice&password=x")
	f.Add("application/json", `{"user":{"email":"a@example.com"}}`)
	f.Add("application/json; charset=utf-8", `{"user":{"email":7}}`)
	f.Add("application/x-www-form-urlencoded", "username=%zz&username=b")
	f.Add("text/plain", "username=alice")
	f.Add("application/json", `{"user":`)
	f.Add("application/json", `{"user":{"email":"a","Email":"b"},"user":1}`)
	f.Add("multipart/form-data; boundary=X", "--X\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\nalice\r\n--X--\r\n")
	never := []sluice.Limit{sluice.FixedWindow(1<<40, time.Minute)}
	mw, _ := clockedMiddleware(f, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: never}},
		Rules: []httplimit.Rule{{Name: "logins", Key: []string{"form:username", "json:user.email"}, Limits: never}},
	})
	h := mw.Handler(echoBody())
	f.Fuzz(func(t *testing.T, contentType, body string) {
		w := post(h, "192.0.2.1", contentType, body)
		if w.Code != 200 || w.Body.String() != body {
			t.Fatalf("%q as %q: %d, the handler read %q", body, contentType, w.Code, w.Body.String())
		}
	})
}
