package httplimit_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
)

// gzipped returns s as one gzip member.
func gzipped(s string) string {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	zw.Write([]byte(s))
	zw.Close()
	return out.String()
}

// zlibbed returns s as a zlib stream: HTTP's deflate.
func zlibbed(s string) string {
	var out bytes.Buffer
	zw := zlib.NewWriter(&out)
	zw.Write([]byte(s))
	zw.Close()
	return out.String()
}

// rawDeflated returns s as a bare DEFLATE stream, without zlib's wrapping.
func rawDeflated(s string) string {
	var out bytes.Buffer
	zw, _ := flate.NewWriter(&out, flate.DefaultCompression)
	zw.Write([]byte(s))
	zw.Close()
	return out.String()
}

// zlibAndBare returns a body that is a zlib stream of a form holding
// zlibForm's pairs and a bare DEFLATE stream of one holding bareForm's:
// Express reads the one, ASP.NET Core the other, as deflate. Read bare,
// its first byte (0x78) opens a stored block whose length is zlib's flags
// and first byte (0x0101) and whose complement is the length of zlib's
// stored block (0xfefe); the bare stream's last block lies inside zlib's.
func zlibAndBare(t *testing.T, zlibForm, bareForm string) string {
	t.Helper()
	const size = 0xfefe // the content of zlib's one stored block
	head := "pad=" + strings.Repeat("a", 255-len("pad=&user")) + "&user"
	bare := "name=" + bareForm
	content := head + "\x01" + string([]byte{byte(len(bare)), 0, ^byte(len(bare)), 0xff}) + bare + "&" + zlibForm + "&x="
	content += strings.Repeat("a", size-len(content))
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], adler32.Checksum([]byte(content)))
	body := "\x78\x01" + "\x01\xfe\xfe\x01\x01" + content + string(sum[:])
	if got, err := io.ReadAll(flate.NewReader(strings.NewReader(body))); err != nil || !strings.HasSuffix(string(got), "&username="+bareForm) {
		t.Fatalf("the bare reading: %v", err)
	}
	if zr, err := zlib.NewReader(strings.NewReader(body)); err != nil {
		t.Fatal(err)
	} else if got, err := io.ReadAll(zr); err != nil || string(got) != content {
		t.Fatalf("the zlib reading: %v", err)
	}
	return body
}

// sendEncoded sends body (as encoded) as contentType to /login from addr
// through h, with a Content-Encoding line for each of encodings, and
// returns the answer. It reports an upstream that did not receive the body
// and its Content-Encoding as sent.
func sendEncoded(t *testing.T, h http.Handler, addr, contentType string, encodings []string, body string) int {
	t.Helper()
	r := httptest.NewRequest("POST", "/login", strings.NewReader(body))
	r.RemoteAddr = addr + ":1234"
	r.Header.Set("Content-Type", contentType)
	for _, e := range encodings {
		r.Header.Add("Content-Encoding", e)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code == http.StatusOK && w.Body.String() != body {
		t.Errorf("the upstream did not receive the body as sent (%d bytes of %d)", w.Body.Len(), len(body))
	}
	return w.Code
}

// bodyKeyRule is a rule of key counting n sign-ins a minute, of fallback.
func bodyKeyRule(key, fallback string, n int64) httplimit.Rule {
	return httplimit.Rule{Name: "logins", Methods: []string{"POST"}, Paths: []string{"/login"},
		Key: []string{key}, Fallback: fallback, Limits: []sluice.Limit{sluice.FixedWindow(n, time.Minute)}}
}

// A gzip'd form body is read as the upstream reads it: Express's
// body-parser (inflate: true by default) decodes it before reading its
// fields, so its username field counts, whatever the rule's fallback.
// Otherwise an attacker compresses each guess at one account and each is
// counted by its address, or under skip not at all: a per-username limit
// of 3 a minute let 5 guesses from 5 addresses (under skip, from one)
// through.
func TestAGzippedSignInFormIsCountedByItsUsername(t *testing.T) {
	for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", fallback, 3))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 5 {
			addr := fmt.Sprintf("192.0.2.%d", i+1)
			if fallback == httplimit.FallbackSkip {
				addr = "192.0.2.1"
			}
			body := gzipped(fmt.Sprintf("username=target&password=p%d", i))
			got = append(got, sendEncoded(t, h, addr, "application/x-www-form-urlencoded", []string{"gzip"}, body))
		}
		if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("fallback %s: five gzip'd guesses at one account: %v, want %v (counted by the username)", fallback, got, want)
		}
	}
}

// A gzip'd JSON body is read as the upstream reads it, decoded: each
// account's sign-in counts by its username, not with every other client
// that compresses under "~" (alice's and bob's, 1 a minute each, both
// pass).
func TestAGzippedJSONSignInIsCountedByItsUsername(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("json:username", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	got := []int{
		sendEncoded(t, h, "192.0.2.1", "application/json", []string{"gzip"}, gzipped(`{"username":"alice","password":"x"}`)),
		sendEncoded(t, h, "198.51.100.7", "application/json", []string{"gzip"}, gzipped(`{"username":"bob","password":"x"}`)),
	}
	if want := []int{200, 200}; !slices.Equal(got, want) {
		t.Errorf("gzip'd sign-ins of alice and bob from two addresses, 1 a minute each: %v, want %v", got, want)
	}
}

// A body of a content coding sluice decodes is read as Node's zlib (so
// Express) decodes it: gzip or x-gzip in any case, deflate as a zlib
// stream, identity set aside; gzip members in a row, and the zero bytes
// that may pad a stream after one. Five guesses at one account from five
// addresses count by its username.
func TestABodyIsReadDecodedAsItsContentEncodingStates(t *testing.T) {
	const form, js = "application/x-www-form-urlencoded", "application/json"
	cases := []struct {
		name, key, contentType string
		encodings              []string
		encode                 func(string) string
	}{
		{"x-gzip", "form:username", form, []string{"x-gzip"}, gzipped},
		{"GZIP in upper case", "form:username", form, []string{"GZIP"}, gzipped},
		{"deflate (zlib)", "form:username", form, []string{"deflate"}, zlibbed},
		{"deflate of JSON", "json:username", js, []string{"deflate"}, zlibbed},
		{"gzip beside identity", "form:username", form, []string{"identity, gzip"}, gzipped},
		{"two gzip members in a row", "form:username", form, []string{"gzip"},
			func(s string) string { return gzipped(s[:5]) + gzipped(s[5:]) }},
		{"a gzip member padded with zero bytes", "form:username", form, []string{"gzip"},
			func(s string) string { return gzipped(s) + "\x00\x00\x00\x00" }},
	}
	for _, c := range cases {
		mw, _ := rulesMiddleware(t, bodyKeyRule(c.key, httplimit.FallbackIP, 3))
		h := mw.Handler(echoBody())
		var got []int
		for i := range 5 {
			plain := fmt.Sprintf("username=target&password=p%d", i)
			if c.contentType == js {
				plain = fmt.Sprintf(`{"username":"target","password":"p%d"}`, i)
			}
			got = append(got, sendEncoded(t, h, fmt.Sprintf("192.0.2.%d", i+1), c.contentType, c.encodings, c.encode(plain)))
		}
		if want := []int{200, 200, 200, 429, 429}; !slices.Equal(got, want) {
			t.Errorf("%s: five guesses at one account from five addresses: %v, want %v (counted by the username)", c.name, got, want)
		}
	}
}

// A body of the key's content type that sluice does not decode — of a
// coding it does not read (br, zstd), of several codings (on one line or
// two), or that does not decode (cut short, a wrong checksum, a bare
// DEFLATE stream, garbage after a gzip member) — may hold the field an
// upstream reads once decoded (body-parser 2 reads br): every such request
// is counted together under "~", whatever the rule's fallback. A br body
// whose bytes happen to read as a form is not read as one.
func TestACompressedBodySluiceDoesNotDecodeIsCountedTogether(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	cutShort := func(s string) string { z := gzipped(s); return z[:len(z)-4] }
	badChecksum := func(s string) string { z := []byte(gzipped(s)); z[len(z)-8] ^= 1; return string(z) }
	cases := []struct {
		name      string
		encodings []string
		encode    func(string) string
	}{
		{"br", []string{"br"}, func(s string) string { return s }},
		{"zstd", []string{"zstd"}, func(s string) string { return s }},
		{"gzip, gzip", []string{"gzip, gzip"}, func(s string) string { return gzipped(gzipped(s)) }},
		{"gzip on two lines", []string{"gzip", "gzip"}, func(s string) string { return gzipped(gzipped(s)) }},
		{"gzip then br", []string{"gzip, br"}, gzipped},
		{"gzip cut short", []string{"gzip"}, cutShort},
		{"gzip of a wrong checksum", []string{"gzip"}, badChecksum},
		{"deflate without zlib's wrapping", []string{"deflate"}, rawDeflated},
		{"gzip followed by garbage", []string{"gzip"}, func(s string) string { return gzipped(s) + "garbage" }},
	}
	for _, c := range cases {
		for _, fallback := range []string{httplimit.FallbackIP, httplimit.FallbackSkip} {
			mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", fallback, 1))
			h := mw.Handler(echoBody())
			got := []int{
				sendEncoded(t, h, "192.0.2.1", form, c.encodings, c.encode("username=alice&password=x")),
				sendEncoded(t, h, "198.51.100.7", form, c.encodings, c.encode("username=bob&password=x")),
			}
			if want := []int{200, 429}; !slices.Equal(got, want) {
				t.Errorf("%s, fallback %s: alice then bob from two addresses, 1 a minute: %v, want %v (counted together)", c.name, fallback, got, want)
			}
		}
	}
}

// A deflate body that is both a zlib stream, which Express reads, and a
// bare DEFLATE stream, which ASP.NET Core reads, may hold a different
// username for each: every such request is counted together under "~".
// Otherwise an attacker names a decoy to sluice and the account it
// guesses to the upstream.
func TestADeflateBodyOfTwoReadingsIsCountedTogether(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	got := []int{
		sendEncoded(t, h, "192.0.2.1", "application/x-www-form-urlencoded", []string{"deflate"}, zlibAndBare(t, "username=decoy1", "target")),
		sendEncoded(t, h, "198.51.100.7", "application/x-www-form-urlencoded", []string{"deflate"}, zlibAndBare(t, "username=decoy2", "target")),
	}
	if want := []int{200, 429}; !slices.Equal(got, want) {
		t.Errorf("two guesses at one account, each with another decoy, from two addresses, 1 a minute: %v, want %v (counted together)", got, want)
	}
}

// A body is decoded to at most MaxKeyBody bytes: one that decodes to
// exactly that many is read, one that decodes to more is counted together
// under "~", and a compression bomb (63 MiB of zeros in 64 KiB) costs the
// bound, not what it expands to.
func TestACompressedBodyIsDecodedToMaxKeyBodyAtMost(t *testing.T) {
	const form = "application/x-www-form-urlencoded"
	padded := func(user string, size int) string {
		s := "username=" + user + "&password=x&pad="
		return s + strings.Repeat("a", size-len(s))
	}
	for _, c := range []struct {
		name string
		size int
		want []int
	}{
		{"decoded to MaxKeyBody bytes", httplimit.MaxKeyBody, []int{200, 200}},
		{"decoded to a byte more", httplimit.MaxKeyBody + 1, []int{200, 429}},
	} {
		mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
		h := mw.Handler(echoBody())
		got := []int{
			sendEncoded(t, h, "192.0.2.1", form, []string{"gzip"}, gzipped(padded("alice", c.size))),
			sendEncoded(t, h, "198.51.100.7", form, []string{"gzip"}, gzipped(padded("bob", c.size))),
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: alice then bob from two addresses, 1 a minute: %v, want %v", c.name, got, c.want)
		}
	}

	zeros := gzipped(strings.Repeat("\x00", 63<<20)) // a gzip member after the fields'
	alice, bob := gzipped("username=alice&password=x&pad=")+zeros, gzipped("username=bob&password=x&pad=")+zeros
	if len(alice) > httplimit.MaxKeyBody {
		t.Fatalf("the bomb is %d bytes, past MaxKeyBody", len(alice))
	}
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 1))
	h := mw.Handler(echoBody())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	first := sendEncoded(t, h, "192.0.2.1", form, []string{"gzip"}, alice)
	runtime.ReadMemStats(&after)
	if got := []int{first, sendEncoded(t, h, "198.51.100.7", form, []string{"gzip"}, bob)}; !slices.Equal(got, []int{200, 429}) {
		t.Errorf("bombs of alice then bob from two addresses, 1 a minute: %v, want [200 429] (counted together)", got)
	}
	// What a request may allocate: the body's copies (as sent, decoded,
	// each read as a form: about four times MaxKeyBody), the decoder's
	// window, the recorder, fresh under -race (whose sync.Pool drops
	// items), and what other goroutines allocate meanwhile — a few
	// hundred KiB to a MiB or so, never in proportion to the 63 MiB the
	// bomb expands to.
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 4<<20 {
		t.Errorf("a bomb of %d bytes that expands to 63 MiB allocated %d bytes to be read, want at most 4 MiB", len(alice), spent)
	}
}

// The upstream receives a compressed body as it was sent, still
// compressed, with its Content-Encoding: sluice decodes a copy for the key.
func TestTheUpstreamReceivesACompressedBodyAsSent(t *testing.T) {
	mw, _ := rulesMiddleware(t, bodyKeyRule("form:username", httplimit.FallbackIP, 3))
	var encoding string
	h := mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoding = r.Header.Get("Content-Encoding")
		echoBody().ServeHTTP(w, r) // sendEncoded compares what it echoes with what was sent
	}))
	sent := gzipped("username=alice&password=x")
	if code := sendEncoded(t, h, "192.0.2.1", "application/x-www-form-urlencoded", []string{"gzip"}, sent); code != 200 {
		t.Fatalf("a gzip'd sign-in: %d, want 200", code)
	}
	if encoding != "gzip" {
		t.Errorf("the upstream received Content-Encoding %q, want gzip", encoding)
	}
}
