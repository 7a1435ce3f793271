package httplimit_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// Rails' params and Laravel's input() read a field from whichever body the
// client sends: an application/json body's member (Rails' ParamsParser,
// Laravel's isJson()) or a form's pair or part (Rack, PHP). So a json: key
// reads a typed form's field, under the name those upstreams give the path
// (user[email] for user.email): email=victim, urlencoded or multipart, is
// a guess at victim's account, counted on it from any address, as the same
// request sent as JSON is. Otherwise a per-account json: limit with an
// address fallback is dodged by sending each guess as a form from an
// address of its own.
func TestAJSONKeyReadsAFormBodysField(t *testing.T) {
	const boundary = "b0undary"
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	multi := http.Header{"Content-Type": {"multipart/form-data; boundary=" + boundary}}
	jsonType := http.Header{"Content-Type": {"application/json"}}
	for _, c := range []struct{ key, form, multipart, json string }{
		{"json:email", "email=victim&password=p1", boundaryPart(boundary, "email", "victim"), `{"email":"victim","password":"p3"}`},
		{"json:user.email", "user%5Bemail%5D=Victim&password=p1", boundaryPart(boundary, "user[email]", "victim"), `{"user":{"email":"victim"}}`},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule(c.key, httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		got := []int{
			sendTyped(t, h, "192.0.2.1", form, c.form),
			sendTyped(t, h, "192.0.2.2", multi, c.multipart),
			sendTyped(t, h, "192.0.2.3", jsonType, c.json),
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: victim as an urlencoded form, a multipart form and JSON from three addresses: %v, want %v", c.key, got, want)
		}
	}
}

// The same upstreams read a form: key's field from an application/json
// body's member of its name: {"username":"victim"} is a guess at victim's
// account, counted on it from any address, as username=victim is.
func TestAFormKeyReadsAJSONBodysMember(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 2))
	h := mw.Handler(echoBody())
	got := []int{
		sendTyped(t, h, "192.0.2.1", http.Header{"Content-Type": {"application/json"}}, `{"username":"victim","password":"p1"}`),
		sendTyped(t, h, "192.0.2.2", http.Header{"Content-Type": {"application/vnd.api+json"}}, `{"password":"p2","USERNAME":" Victim"}`),
		sendTyped(t, h, "192.0.2.3", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "username=victim&password=p3"),
	}
	if want := []int{200, 200, 429}; !slices.Equal(got, want) {
		t.Errorf("victim as JSON, +json and a form from three addresses: %v, want %v", got, want)
	}
}

// A typed body is read only the ways upstreams read its type: no upstream
// reads an application/json body's bytes as form pairs (Rack reads only an
// untyped POST so), so a "&username=x&" inside one of its strings is no
// field, and the member is the field's value
// ({"username":"decoy0","pad":"&username=victim&"} is decoy0's attempt; an
// untyped POST of it is counted together, see
// TestAnUntypedPOSTWhoseJSONAndFormReadingsDifferIsAmbiguous). A typed
// JSON body sluice cannot read whole may hold the member the upstream
// reads: to a form: key such requests are counted together whatever the
// fallback, as an unreadable form is; so is a form body past MaxKeyBody to
// a json: key.
func TestAFormKeyOfATypedJSONBodyReadsItAsJSONAlone(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	jsonType := http.Header{"Content-Type": {"application/json"}}
	for i := range 3 {
		body := fmt.Sprintf(`{"username":"decoy%d","pad":"&username=victim&password=guess%d&"}`, i, i)
		if code := sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1), jsonType, body); code != 200 {
			t.Errorf("decoy%d's first attempt, a JSON body holding a pair in a string: %d, want 200 (decoy%d's count)", i, code, i)
		}
	}
	long := strings.Repeat("x", httplimit.MaxKeyBody)
	got := []int{
		sendAs(t, h, "POST", "198.51.100.1", jsonType, `{"username":"carol","pad":"`+long+`"}`),
		sendAs(t, h, "POST", "198.51.100.2", jsonType, `{"username":"dave",`),
	}
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("JSON bodies not read whole, from two addresses: %v, want %v", got, want)
	}

	mw, _ = rulesMiddleware(t, bodyKeyRule("json:email", httplimit.FallbackIP, 1))
	h = mw.Handler(echoBody())
	form := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	got = []int{
		sendTyped(t, h, "198.51.100.1", form, "email=carol&pad="+long),
		sendTyped(t, h, "198.51.100.2", form, "email=dave&pad="+long),
	}
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("forms past MaxKeyBody to a json: key, from two addresses: %v, want %v", got, want)
	}
}

// Rails' params and Laravel's input() nest a bracketed form name and a
// JSON body alike: the form field user[email] (Devise's sign-in form) is
// params[:user][:email], and so is the JSON body
// {"user":{"email":"victim"}} (Devise's JSON sign-in sends exactly that);
// Laravel's input('user.email') reads both. So form:user[email] reads the
// member user.email of a JSON body, as json:user.email reads the form's
// user[email]: each guess sent as JSON is victim's attempt, counted
// together from three addresses. Express's req.body reads the member
// "user[email]" of a JSON body as the field of a form it parses without
// nesting, so that member is read too, and one beside a user.email of
// another value makes the field ambiguous.
func TestAFormKeyOfABracketedNameReadsTheNestedJSONMember(t *testing.T) {
	for _, body := range []string{
		`{"user":{"email":"victim","password":"p%d"}}`,
		`{"user[email]":"victim","password":"p%d"}`,
		`{"user[email]":"decoy%d","user":{"email":"victim"}}`,
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:user[email]", httplimit.FallbackIP, 2))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 3 {
			got = append(got, sendTyped(t, h, fmt.Sprintf("192.0.2.%d", i+1),
				http.Header{"Content-Type": {"application/json; charset=utf-8"}}, fmt.Sprintf(body, i)))
		}
		if want := []int{200, 200, 429}; !slices.Equal(got, want) {
			t.Errorf("form:user[email], %s from three addresses: %v, want %v", body, got, want)
		}
	}
}
