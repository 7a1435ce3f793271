package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// Rack 2 (so Rails on it) strips the brackets around a name's first
// segment: "[email]", "email]" and "]email" are params[:email], and
// "[user][email]" and "user][email]" are params[:user][:email]. Rack 3
// reads them as names of their own, so such a pair is the field to some
// upstreams and not to others: every such request of the rule is counted
// together, from any address, in a typed form, an untyped POST and a
// multipart part.
// Otherwise an attacker sends each guess at one account under such a
// name and each is counted by its address.
func TestAFieldNameInRackStrippedBracketsIsCountedTogether(t *testing.T) {
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	for _, c := range []struct {
		key    string
		header http.Header
		names  []string
	}{
		{"form:email", form, []string{"[email]", "email]", "]email"}},
		{"form:email", nil, []string{"%5Bemail%5D", "email]", "]]email]]"}},
		{"form:user[email]", form, []string{"[user][email]", "user][email]", "user[[email]]"}},
		{"json:user.email", nil, []string{"[user][email]", "user][email]", "]user[email]"}},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule(c.key, httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i, name := range c.names {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), c.header, name+"=victim&password=p"+fmt.Sprint(i)))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: victim under %q from three addresses: %v, want %v", c.key, c.names, got, want)
		}
	}

	mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	var got []int
	for i, name := range []string{"[email]", "email]", "]email"} {
		got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, multipartPart(name, "victim")+"--X--\r\n"))
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("form:email: victim in multipart parts so named from three addresses: %v, want %v", got, want)
	}
}

// Rack reads a multipart body of any subtype with a boundary
// (multipart/mixed and multipart/related as multipart/form-data) as a
// form, and one without a boundary as an urlencoded form: its field
// counts, from any address.
func TestAMultipartBodyOfAnyKindIsReadAsRackReadsIt(t *testing.T) {
	for _, c := range []struct{ contentType, format string }{
		{"multipart/mixed; boundary=X", multipartPart("email", "victim") + multipartPart("password", "p%d") + "--X--\r\n"},
		{"multipart/related; boundary=X", multipartPart("email", "victim") + multipartPart("password", "p%d") + "--X--\r\n"},
		{"multipart/form-data", "email=victim&password=p%d"},
		{"multipart/mixed", "email=victim&password=p%d"},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), http.Header{"Content-Type": {c.contentType}}, fmt.Sprintf(c.format, i)))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("victim as %q from three addresses: %v, want %v", c.contentType, got, want)
		}
	}
}

// Rack reads a multipart part's name from its Content-Disposition whatever
// the disposition's type (Rack 2 after the last " name=", Rack 3 as the
// name parameter; "should always be form-data", it notes), and names a
// part without one by its Content-ID; Go's Part.FormName reads form-data
// parts alone. A part "attachment; name=email" is params[:email] to Rails
// and Sinatra: counted as the field, from any address; beside a form-data
// part of another value, which Go reads, counted together.
func TestAMultipartPartNamedUnderAnotherDispositionIsTheField(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	part := func(head, value string) string { return "--X\r\n" + head + "\r\n\r\n" + value + "\r\n" }
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	got := []int{
		sendTyped(t, h, "192.0.2.1", mp, part(`Content-Disposition: attachment; name="email"`, "victim")+"--X--\r\n"),
		sendTyped(t, h, "192.0.2.2", mp, part("Content-Disposition: inline; NAME=email", "victim")+"--X--\r\n"),
		sendTyped(t, h, "192.0.2.3", mp, part("Content-ID: email", "victim")+"--X--\r\n"),
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim in a part of another disposition, another, by Content-ID, from three addresses: %v, want %v", got, want)
	}
	got = got[:0]
	for i := range 4 {
		body := multipartPart("email", fmt.Sprint("decoy", i)) + part(`Content-Disposition: attachment; name="email"`, "victim") + "--X--\r\n"
		got = append(got, sendTyped(t, h, fmt.Sprintf("198.51.100.%d", i+1), mp, body))
	}
	if want := []int{200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("a form-data decoy beside victim as an attachment, from four addresses: %v, want %v", got, want)
	}
}

// A query: key reads a parameter under a name Rack 2 strips to the key's
// ("[tenant]", "tenant]", "]tenant") as a form: key does: Rack 2 (and
// Rails 7.1 to 8.0) reads it as the parameter, Rack 3 and Go as a name of
// its own. Every such request of the rule is counted together, whatever
// its fallback, so that a client of many addresses spelling its tenant so
// gets no count per address.
func TestAQueryKeyCountsARackBracketedNameTogether(t *testing.T) {
	for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
		mw, _ := rulesMiddleware(t, httplimit.Rule{Name: "tenants", Key: []string{"query:tenant"}, Fallback: fallback,
			Limits: []sluice.Limit{sluice.FixedWindow(2, time.Minute)}})
		var rs []req
		for i, q := range []string{"[tenant]=acme", "tenant]=acme", "%5Dtenant=acme"} {
			rs = append(rs, req{remote: fmt.Sprintf("192.0.2.%d:1", i+1), path: "/api/search?" + q})
		}
		if got, want := statuses(mw, rs...), []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("fallback %s: tenant acme under Rack 2's bracketed names from three addresses: %v, want %v", fallback, got, want)
		}
	}
}

// Rack names a multipart part where Go's Part.FormName names it otherwise
// or not at all, and a part Go reads as a file may be a field to Rack.
// Each part below is {"email"=>"victim"} to Rack 2.2's
// Rack::Request#POST, and r.FormValue("email") is "" to Go:
//   - a quoted name's backslash escapes are undone for any character
//     (Rack 2.2's dequote, Rack 3's parameter loop): name="em\ail" is
//     email, where mime.ParseMediaType keeps the backslash;
//   - name= right after ';' in a disposition Go refuses whole (x=@);
//   - filename*0= (an RFC 2231 continuation) makes the part a file to Go,
//     which joins continuations, and leaves it a field to Rack, which
//     reads filename and filename* alone;
//   - Rack 2.2's pattern is not anchored to a line's start, so
//     X-Content-Disposition names the part (to Rack 2.2, not Rack 3);
//   - Rack 2.2's pattern stops at a colon, so a colon in a value before
//     name= leaves it the part's Content-ID (email), where Go and Rack 3
//     read name="decoy";
//   - Rack 2.2's pattern takes the last ';name=' before a colon, inside a
//     quoted value too (c), where Go and Rack 3 read a.
//
// The part is read under every name one of them gives it: each is
// victim's attempt, counted together from three addresses.
func TestAMultipartPartIsTheFieldOfEveryNameGoOrRackReads(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	part := func(head, value string) string { return "--X\r\n" + head + "\r\n\r\n" + value + "\r\n" }
	for _, c := range []struct{ key, head string }{
		{"form:email", `Content-Disposition: form-data; name="em\ail"`},
		{"form:email", `Content-Disposition: form-data;name=email;x=@`},
		{"form:email", `Content-Disposition: form-data; name="email"; filename*0="x"`},
		{"form:email", `X-Content-Disposition: form-data; name="email"`},
		{"form:email", "Content-Disposition: form-data; x=\"a:b\"; name=\"decoy\"\r\nContent-ID: email"},
		{"form:c", `Content-Disposition: form-data; name="a"; x="b;name=c"`},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule(c.key, httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			body := part(c.head, "victim") + part(`Content-Disposition: form-data; name="password"`, fmt.Sprint("p", i)) + "--X--\r\n"
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, body))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: victim in a part %q from three addresses: %v, want %v", c.key, c.head, got, want)
		}
	}
}

// A part that Go, both Racks and PHP read as a file is no field: Rack 2.2
// reads a filename parameter anywhere in a head whose disposition is
// wholly parameters, Rack 3 a filename or filename* parameter, PHP a
// filename one alone (a filename* part is a field to it; see
// TestMultipartFieldPHPReadsIsTheAccountsAttempt). Its name's contents
// are no attempt: each address is counted on its own.
func TestAMultipartFileToEveryReaderIsNoField(t *testing.T) {
	mp := http.Header{"Content-Type": {"multipart/form-data; boundary=X"}}
	for _, head := range []string{
		`Content-Disposition: form-data; name="email"; filename="a.txt"`,
		`Content-Disposition: form-data; name="email"; filename*=UTF-8''a.txt; filename="a.txt"`,
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:email", httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 2 {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), mp, "--X\r\n"+head+"\r\n\r\nvictim\r\n--X--\r\n"))
		}
		if want := []int{200, 200}; !slices.Equal(got, want) {
			t.Errorf("a file part %q from two addresses: %v, want %v", head, got, want)
		}
	}
}
