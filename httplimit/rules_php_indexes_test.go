package httplimit_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// PHP reads a multipart/form-data field's name through
// normalize_protected_variable (main/rfc1867.c) before it names it: the
// whitespace (' ', '\t', '\r', '\n') opening each array index is dropped,
// and what follows the last index is cut. So parts named "user[ email]",
// "user[\temail]" and "user[email]x" are all $_POST['user']['email'],
// Laravel's input('user.email'), the field keyed form:user[email]. Three
// attempts on one account, each from its own address, meet the
// per-account limit.
func TestMultipartFieldUnderIndexesPHPNormalizesIsTheAccountsAttempt(t *testing.T) {
	for _, name := range []string{"user[ email]", "user[\temail]", "user[email]x"} {
		mw, _ := rulesMiddleware(t, loginRule("form:user[email]"))
		h := mw.Handler(okHandler())
		var bodies []string
		for i := range 3 {
			bodies = append(bodies, multipartPart(name, "victim@example.com")+multipartPart("password", fmt.Sprint("guess", i))+"--X--\r\n")
		}
		if got, want := posts(h, "multipart/form-data; boundary=X", bodies...), []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("part named %q (PHP's user[email]), three attempts from three addresses: %v, want %v", name, got, want)
		}
	}
}

// PHP's php_register_variable_ex names a variable from any source up to
// where its array indexes end, whatever follows: "user[email]x",
// "user[email]]" and "user[email][x" are $_POST['user']['email'] in an
// urlencoded body and $_GET's in the query, the field keyed
// form:user[email]. Three attempts on one account under such names, each
// from its own address, meet the per-account limit.
func TestFieldNamedPastItsIndexesIsTheAccountsAttempt(t *testing.T) {
	names := []string{"user%5Bemail%5Dx", "user[email]]", "user[email][x"}
	mw, _ := rulesMiddleware(t, loginRule("form:user[email]"))
	h := mw.Handler(okHandler())
	var bodies []string
	for i, name := range names {
		bodies = append(bodies, name+"=victim%40example.com&password=guess"+fmt.Sprint(i))
	}
	if got, want := posts(h, formType, bodies...), []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("form fields named %q (PHP's user[email]) from three addresses: %v, want %v", names, got, want)
	}

	mw, _ = rulesMiddleware(t, loginRule("form:user[email]"))
	h = mw.Handler(okHandler())
	var got []int
	for i, name := range names {
		r := httptest.NewRequest("POST", "/login?"+name+"=victim%40example.com", strings.NewReader("password=guess"+fmt.Sprint(i)))
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
		r.Header.Set("Content-Type", formType)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("query parameters named %q (PHP's user[email]) from three addresses: %v, want %v", names, got, want)
	}
}
