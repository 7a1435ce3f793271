package checkjson

import (
	"strings"
	"testing"

	"github.com/sluice-dev/sluice/client"
)

// A request's strings are text, or the body is refused, naming the member:
// encoding/json reads a byte outside UTF-8, and a \uD800–\uDFFF escape
// outside a surrogate pair (valid JSON, which JSON.stringify writes), as
// U+FFFD, so that "a\xff" and "a\xfe" would be one client, charged
// together. An escaped backslash before "uD800" is text, and so is a
// surrogate pair.
func TestDecodeStrictRefusesStringsThatAreNotText(t *testing.T) {
	for body, member := range map[string]string{
		"{\"subject\":\"a\xff\"}":                        `"subject"`,
		"{\"user\":\"u\",\"subject\":\"a\xed\xa0\x80\"}": `"subject"`,
		`{"subject":"b\ud800"}`:                          `"subject"`,
		`{"api_key":"k\udbff"}`:                          `"api_key"`,
		`{"token":"t\udc00x"}`:                           `"token"`,
		`{"user":"\ud800\ud800"}`:                        `"user"`,
		`{"user":"\ud800\\udc00"}`:                       `"user"`,
		`{"user":"\\\ud800"}`:                            `"user"`,
		`{"user":"u","headers":{"X-A":"\udfff"}}`:        `"headers"`,
		"{\"user\":\"u\",\"headers\":{\"\xfe\":\"1\"}}":  `"headers"`,
		`{"USER":"\ud83d"}`:                              `"USER"`,
	} {
		var req client.CheckRequest
		err := DecodeStrict([]byte(body), &req)
		if err == nil || !strings.Contains(err.Error(), member+": a string that is not text") {
			t.Errorf("%q: %v, want an error naming %s", body, err, member)
		}
	}
	for body, want := range map[string]string{
		`{"user":"\\ud800"}`:      `\ud800`,
		`{"user":"\\\\ud800"}`:    `\\ud800`,
		`{"user":"\ud83d\ude00"}`: "😀",
		`{"user":"\uD83D\uDE00"}`: "😀",
		`{"user":"\udbff\udfff"}`: "\U0010ffff",
		`{"user":"\ufffd"}`:       "\ufffd",
		`{"user":"é\u00e9"}`:      "éé",
	} {
		var req client.CheckRequest
		if err := DecodeStrict([]byte(body), &req); err != nil || req.User != want {
			t.Errorf("%s: user %q, %v; want %q", body, req.User, err, want)
		}
	}
}
