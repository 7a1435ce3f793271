package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

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
