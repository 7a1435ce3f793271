package httplimit_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/httplimit"
)

// gzippedNamed returns s as one gzip member whose header's file name
// (FNAME, free Latin-1 text) is name.
func gzippedNamed(t *testing.T, name, s string) string {
	t.Helper()
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Name = name
	zw.Write([]byte(s))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// An upstream that does not decode a request body reads its bytes as sent
// as the form: Go's r.FormValue, PHP, Rack, Django and Spring for any
// Content-Encoding, and ASP.NET Core for a coding it has no provider for
// (x-gzip, "identity, gzip"). A body whose bytes as sent hold the field
// (here in a gzip header's file name) beside content that holds another
// value is counted with every such request under "~": five guesses at
// target, each with another decoy in the content, from five addresses
// pass a 3-a-minute limit 3 times.
func TestACompressedBodyWhoseBytesAsSentHoldAnotherUsernameIsCountedTogether(t *testing.T) {
	for _, coding := range []string{"gzip", "x-gzip", "identity, gzip"} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 3))
		var seen []string
		h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen = append(seen, r.FormValue("username")) // Go's reading: the body as sent
		}))
		var got []int
		for i := range 5 {
			body := gzippedNamed(t, "&username=target&", fmt.Sprintf("username=decoy%d&password=p%d", i, i))
			r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
			r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.Header.Set("Content-Encoding", coding)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			got = append(got, w.Code)
		}
		for _, s := range seen {
			if s != "target" {
				t.Fatalf("the upstream read username %q, want target (the probe is wrong)", s)
			}
		}
		if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("Content-Encoding %q: five guesses at target (as Go reads the body) from five addresses, 3 a minute: %v, want %v", coding, got, want)
		}
	}
}

// What follows a zlib stream's checksum is no content (Node's zlib ignores
// it) but is read as the form by an upstream that reads the body as sent:
// zlib(username=decoyN) followed by &username=target& is counted with
// every such request under "~".
func TestADeflateBodyWithPairsAfterItsStreamIsCountedTogether(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 3))
	var seen []string
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.FormValue("username"))
	}))
	var got []int
	for i := range 5 {
		body := zlibbed(fmt.Sprintf("username=decoy%d&password=p%d", i, i)) + "&username=target&"
		r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
		r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i+1)
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.Header.Set("Content-Encoding", "deflate")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got = append(got, w.Code)
	}
	for _, s := range seen {
		if s != "target" {
			t.Fatalf("the upstream read username %q, want target (the probe is wrong)", s)
		}
	}
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
		t.Errorf("five guesses at target from five addresses, 3 a minute: %v, want %v", got, want)
	}
}

// A compressed body is counted by its content's field when its bytes as
// sent hold no field of that name (as Express reads it), and by the one
// value both readings give when they agree (the field in a gzip header's
// file name and in the content alike): alice's sign-ins from two addresses
// count together, bob's apart, 1 a minute each.
func TestACompressedBodyIsCountedByTheUsernameBothReadingsGive(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	cases := []struct {
		name   string
		encode func(user string) string
	}{
		{"no field as sent", func(user string) string { return gzipped("username=" + user + "&password=x") }},
		{"the same field as sent", func(user string) string {
			return gzippedNamed(t, "&username="+strings.ToUpper(user)+"&", "username="+user+"&password=x")
		}},
	}
	for _, c := range cases {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		got := []int{
			sendEncoded(t, h, "192.0.2.1", form, []string{"gzip"}, c.encode("alice")),
			sendEncoded(t, h, "198.51.100.7", form, []string{"gzip"}, c.encode("alice")),
			sendEncoded(t, h, "203.0.113.9", form, []string{"gzip"}, c.encode("bob")),
		}
		if want := []int{200, 429, 200}; !slices.Equal(got, want) {
			t.Errorf("%s: alice from two addresses then bob, 1 a minute: %v, want %v (counted by the username)", c.name, got, want)
		}
	}
}

// A compressed body whose bytes as sent hold the field while its content
// does not is counted with every such request under "~", whatever the
// rule's fallback: an upstream reading the body as sent reads the field
// there, so the client's address (or, under skip, no count) would let each
// guess pass.
func TestACompressedBodyWithTheFieldOnlyAsSentIsCountedTogether(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", fallback, 1))
		h := mw.Handler(echoBody())
		body := gzippedNamed(t, "&username=target&", "password=x")
		got := []int{
			sendEncoded(t, h, "192.0.2.1", form, []string{"gzip"}, body),
			sendEncoded(t, h, "198.51.100.7", form, []string{"gzip"}, body),
		}
		if want := []int{200, 429}; !slices.Equal(got, want) {
			t.Errorf("fallback %s: two guesses at target from two addresses, 1 a minute: %v, want %v (counted together)", fallback, got, want)
		}
	}
}

// A compressed JSON body's bytes as sent are no JSON, but gjson and
// jsonparser find a member in them (gjson skips what comes before an
// object): one whose bytes as sent hold a string that may name the field
// (plainly or by escapes) is counted under "~"; one whose bytes hold none
// is counted by its content's field.
func TestACompressedJSONBodyWhoseBytesAsSentMayNameTheFieldIsCountedTogether(t *testing.T) {
	const js = "application/json"
	for _, c := range []struct {
		name, fname string
		want        []int
	}{
		{"a member in the file name", `{"username":"target"}`, []int{200, 429}},
		{"a member named by escapes", `{"\u0075SERNAME":"target"}`, []int{200, 429}},
		{"a member cut at an escape gjson stops at", `{"username\q":"target"}`, []int{200, 429}},
		{"another member", `{"password":"target"}`, []int{200, 200}},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("json:username", httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		got := []int{
			sendEncoded(t, h, "192.0.2.1", js, []string{"gzip"}, gzippedNamed(t, c.fname, `{"username":"decoy1"}`)),
			sendEncoded(t, h, "198.51.100.7", js, []string{"gzip"}, gzippedNamed(t, c.fname, `{"username":"decoy2"}`)),
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: two decoys from two addresses, 1 a minute: %v, want %v", c.name, got, c.want)
		}
	}
}

// A compressed multipart/form-data body is counted by its content's field
// when its bytes as sent do not hold its boundary's delimiter (no reader
// finds a part there), and under "~" when they do: Go's multipart reader
// skips what comes before the delimiter and reads the part after it.
func TestACompressedMultipartBodyWithAPartAsSentIsCountedTogether(t *testing.T) {
	const mp = "multipart/form-data; boundary=XyZ"
	part := func(user string) string {
		return "--XyZ\r\nContent-Disposition: form-data; name=\"username\"\r\n\r\n" + user + "\r\n--XyZ--\r\n"
	}
	padded := func(user string) string { return gzipped(part(user)) + "\x00\r\n" + part("target") }
	probe := httptest.NewRequest("POST", "/login", strings.NewReader(padded("alice")))
	probe.Header.Set("Content-Type", mp)
	if v := probe.FormValue("username"); v != "target" {
		t.Fatalf("Go read username %q as sent, want target (the probe is wrong)", v)
	}
	for _, c := range []struct {
		name   string
		encode func(user string) string
		want   []int
	}{
		{"no delimiter as sent", func(user string) string { return gzipped(part(user)) }, []int{200, 200}},
		{"a part after the member's padding", padded, []int{200, 429}},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		got := []int{
			sendEncoded(t, h, "192.0.2.1", mp, []string{"gzip"}, c.encode("alice")),
			sendEncoded(t, h, "198.51.100.7", mp, []string{"gzip"}, c.encode("bob")),
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: alice then bob from two addresses, 1 a minute: %v, want %v", c.name, got, c.want)
		}
	}
}
