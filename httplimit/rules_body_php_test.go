package httplimit_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// PHP reads a multipart/form-data body's parts itself (main/rfc1867.c):
// from a part's first Content-Disposition header, its key in any case and
// its lines joined as sent, it takes the last "name" parameter, in double
// or single quotes or bare, an open quote read to the end, whatever the
// disposition's type or whether there is one, and only a "filename"
// parameter makes the part a file ("filename*" does not). Each part below
// is therefore the account's field to PHP (so to Laravel's input() and
// $_REQUEST), under the name PHP gives it ("user.name" is user_name), while
// Go and Rack read it as a file, under a name of its own, or under none. A
// run of attempts on one account, each from a fresh address, meets the
// per-account limit.
func TestMultipartFieldPHPReadsIsTheAccountsAttempt(t *testing.T) {
	for _, c := range []struct{ key, head string }{
		{"form:username", `Content-Disposition: form-data; name="username"; filename*=UTF-8''a.txt`},
		{"form:username", `Content-Disposition: form-data; name='username'`},
		{"form:username", `Content-Disposition: name="username"`},
		{"form:username", `Content-Disposition: form-data; name="username`},
		{"form:username", "content-disposition: form-data;\r\n\tname='username'"},
		{"form:user_name", `Content-Disposition: form-data; name='user.name'`},
	} {
		mw, _ := rulesMiddleware(t, loginRule(c.key))
		h := mw.Handler(okHandler())
		var got []int
		for i := range 3 {
			body := "--X\r\n" + c.head + "\r\n\r\nvictim\r\n" +
				"--X\r\nContent-Disposition: form-data; name=\"password\"\r\n\r\nguess" + fmt.Sprint(i) + "\r\n--X--\r\n"
			got = append(got, post(h, fmt.Sprintf("192.0.2.%d", i+1), "multipart/form-data; boundary=X", body).Code)
		}
		if want := []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: %q (PHP's field, victim), three attempts from three addresses: %v, want %v", c.key, c.head, got, want)
		}
	}
}

// A part with an empty filename is a field to Go, a file PHP did not get
// (in $_FILES, never $_POST) and nothing to Rack. Beside it, a part only
// PHP reads as the field: the field is ambiguous, counted together with
// the rule's other such requests, so a decoy changing with every attempt
// gets no fresh count, whatever the rule's fallback.
func TestMultipartPHPOnlyFieldBesideAGoOnlyDecoyIsCountedTogether(t *testing.T) {
	r := loginRule("form:username")
	r.Fallback = httplimit.FallbackShared
	mw, _ := rulesMiddleware(t, r)
	h := mw.Handler(okHandler())
	var got []int
	for i := range 3 {
		body := "--X\r\nContent-Disposition: form-data; name=\"username\"; filename=\"\"\r\n\r\ndecoy" + fmt.Sprint(i) + "\r\n" +
			"--X\r\nContent-Disposition: form-data; name='username'\r\n\r\nvictim\r\n--X--\r\n"
		got = append(got, post(h, "192.0.2.1", "multipart/form-data; boundary=X", body).Code)
	}
	if want := []int{200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("PHP's username victim beside a decoy Go alone reads, three attempts: %v, want %v", got, want)
	}
}

// PHP opens a part after any line that is "--X" up to a NUL, and ends a
// value at the first "\n--X", whatever follows it: in each body below PHP
// reads username victim in a part that Go and Rack read as the value of
// the decoy field, or past the final delimiter, where they read nothing.
// Such a body may hold a field that PHP alone reads: it is counted
// together with the rule's other such requests, from whatever address.
func TestMultipartPartPHPAloneDelimitsIsCountedTogether(t *testing.T) {
	const victim = "Content-Disposition: form-data; name=\"username\"\r\n\r\nvictim"
	for _, c := range []struct{ name, body string }{
		{"a delimiter line with a NUL", "--X\r\nContent-Disposition: form-data; name=\"decoy\"\r\n\r\n%d\r\n--X\x00\r\n" + victim + "\r\n--X--\r\n"},
		{"a delimiter line ended by a bare \\n", "--X\r\nContent-Disposition: form-data; name=\"decoy\"\r\n\r\n%d\n--X\n" + victim + "\r\n--X--\r\n"},
		{"a part past the final delimiter", "--X\r\nContent-Disposition: form-data; name=\"decoy\"\r\n\r\n%d\r\n--X--\r\n--X\r\n" + victim + "\r\n--X--\r\n"},
	} {
		mw, _ := rulesMiddleware(t, loginRule("form:username"))
		h := mw.Handler(okHandler())
		var got []int
		for i := range 3 {
			got = append(got, post(h, fmt.Sprintf("192.0.2.%d", i+1), "multipart/form-data; boundary=X", fmt.Sprintf(c.body, i)).Code)
		}
		if want := []int{200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s, three attempts from three addresses: %v, want %v", c.name, got, want)
		}
	}
}

// PHP reads a multipart/form-data body alone, Rack any multipart one: in
// a multipart/mixed body, the name PHP alone would read is no field, and
// each address is counted on its own.
func TestMultipartMixedIsNoFieldToPHP(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("form:username"))
	h := mw.Handler(okHandler())
	body := "--X\r\nContent-Disposition: form-data; name='username'\r\n\r\nvictim\r\n--X--\r\n"
	var got []int
	for i := range 2 {
		got = append(got, post(h, fmt.Sprintf("192.0.2.%d", i+1), "multipart/mixed; boundary=X", body).Code)
	}
	if want := []int{200, 200}; !slices.Equal(got, want) {
		t.Errorf("a multipart/mixed part only PHP would name username, from two addresses: %v, want %v", got, want)
	}
}

// Go decodes a quoted-printable part, Rack and PHP read it as sent:
// "vic=74im" is victim to Go alone, so the field is ambiguous, counted
// with the rule's other such requests, not with victim's attempts.
func TestMultipartQuotedPrintableFieldIsAmbiguous(t *testing.T) {
	mw, _ := rulesMiddleware(t, loginRule("form:username"))
	h := mw.Handler(okHandler())
	part := func(cte, v string) string {
		return "--X\r\nContent-Disposition: form-data; name=\"username\"\r\n" + cte + "\r\n" + v + "\r\n--X--\r\n"
	}
	got := []int{
		post(h, "192.0.2.1", "multipart/form-data; boundary=X", part("", "victim")).Code,
		post(h, "192.0.2.2", "multipart/form-data; boundary=X", part("Content-Transfer-Encoding: quoted-printable\r\n", "vic=74im")).Code,
		post(h, "192.0.2.3", "multipart/form-data; boundary=X", part("Content-Transfer-Encoding: quoted-printable\r\n", "=76ictim")).Code,
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim, then two quoted-printable spellings of it, from three addresses: %v, want %v", got, want)
	}
}
