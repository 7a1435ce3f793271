package httplimit_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// A JSON body with a field's member given twice, the same name or one
// differing only in case, is ambiguous (encoding/json and JavaScript read
// the last, gjson and jsonparser the first): every such request of the
// rule counts together, so that a decoy changing with every attempt does
// not hide the account guessed.
func TestAJSONMemberGivenTwiceIsAmbiguous(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Paths: []string{"/login"},
		Key: []string{"json:user.email"}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
	h := mw.Handler(echoBody())
	for _, shape := range []string{
		`{"user":{"email":"victim@example.com","email":"decoy%d@example.com"}}`,
		`{"user":{"email":"decoy%d@example.com","Email":"victim@example.com"}}`,
		`{"user":{"email":"victim@example.com"},"user":{"email":"decoy%d@example.com"}}`,
	} {
		var got []int
		for i := range 4 {
			body := fmt.Sprintf(shape, i)
			got = append(got, post(h, fmt.Sprintf("192.0.2.%d", i+1), "application/json", body).Code)
		}
		if want := []int{200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s from four addresses: %v, want %v (counted together)", shape, got, want)
		}
		mw, _ = rulesMiddleware(t, httplimit.Rule{Name: "logins", Paths: []string{"/login"},
			Key: []string{"json:user.email"}, Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
		h = mw.Handler(echoBody())
	}
	// One member of each name, other members repeated: not ambiguous.
	var got []int
	for i := range 3 {
		body := fmt.Sprintf(`{"pad":1,"pad":2,"user":{"email":"ann%d@example.com"}}`, i)
		got = append(got, post(h, "198.51.100.1", "application/json", body).Code)
	}
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("three accounts with a repeated member beside: %v, want %v", got, want)
	}
}

// A multipart/form-data body's fields key a rule as a urlencoded form's do
// (Go's FormValue, PHP, Django and Rails read both): switching the content
// type does not hide the account guessed. Its files are no fields.
func TestRuleKeyedByAMultipartFormField(t *testing.T) {
	mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{"form:username"}, Limits: []sluice.Limit{sluice.FixedWindow(3, time.Minute)}})
	h := mw.Handler(echoBody())
	part := func(name, value string) string {
		return "--X\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n"
	}
	var got []int
	for i := range 5 {
		body := part("username", []string{"alice", "Alice", "alice", "ALICE", "alice"}[i]) + part("password", fmt.Sprint(i)) + "--X--\r\n"
		w := post(h, fmt.Sprintf("192.0.2.%d", i+1), "multipart/form-data; boundary=X", body)
		got = append(got, w.Code)
		if w.Code == 200 && w.Body.String() != body {
			t.Errorf("the upstream read %q, want %q", w.Body.String(), body)
		}
	}
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("alice from five addresses, multipart: %v, want %v", got, want)
	}
	// A file named username is no field, and two differing fields are
	// ambiguous, counted together apart from alice.
	file := "--X\r\nContent-Disposition: form-data; name=\"username\"; filename=\"a.txt\"\r\n\r\nalice\r\n--X--\r\n"
	if w := post(h, "198.51.100.1", "multipart/form-data; boundary=X", file); w.Code != 200 {
		t.Errorf("a file named username: %d, want 200 (no field: by address)", w.Code)
	}
	got = nil
	for i := range 3 {
		body := part("username", "alice") + part("username", fmt.Sprintf("decoy%d", i)) + "--X--\r\n"
		got = append(got, post(h, fmt.Sprintf("203.0.113.%d", i+1), "multipart/form-data; boundary=X", body).Code)
	}
	if want := []int{200, 200, 200}; !slices.Equal(got, want) {
		t.Errorf("alice beside a decoy, three times: %v, want %v (ambiguous: a count of its own)", got, want)
	}
	if w := post(h, "203.0.113.9", "multipart/form-data; boundary=X", part("username", "x")+part("username", "y")+"--X--\r\n"); w.Code != 429 {
		t.Errorf("a fourth ambiguous request: %d, want 429", w.Code)
	}
}
