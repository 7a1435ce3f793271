package checkjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/client"
)

// referenceDecode is the decision API's body as docs/api.md states it, read
// by encoding/json alone: exactly one JSON value (json.Valid) of text
// (referenceText), an object without unknown fields, into a request, a
// member given twice read as its last (encoding/json's for strings; the
// last "headers" object, where encoding/json would merge them).
func referenceDecode(body []byte) (client.CheckRequest, bool) {
	var req client.CheckRequest
	if !json.Valid(body) || !referenceText(body) {
		return req, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return client.CheckRequest{}, false
	}
	var members []struct {
		Name  string
		Value json.RawMessage
	}
	dec = json.NewDecoder(bytes.NewReader(body))
	dec.Token()
	for dec.More() {
		name, _ := dec.Token()
		var v json.RawMessage
		dec.Decode(&v)
		members = append(members, struct {
			Name  string
			Value json.RawMessage
		}{name.(string), v})
	}
	for i := len(members) - 1; i >= 0; i-- {
		if bytes.EqualFold([]byte(members[i].Name), []byte("headers")) {
			req.Headers = nil
			json.Unmarshal(members[i].Value, &req.Headers)
			break
		}
	}
	return req, true
}

// referenceText reports whether body, one JSON value, is UTF-8 and holds
// no \uD800–\uDFFF escape outside a surrogate pair, by a regular
// expression rather than Text's scan: in JSON every backslash starts an
// escape in a string, and the escapes, matched leftmost-first from the
// first backslash, are a pair, a surrogate alone (group 1) or another.
func referenceText(body []byte) bool {
	escape := regexp.MustCompile(`\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|(u[dD][89a-fA-F][0-9a-fA-F]{2})|[\s\S])`)
	for _, m := range escape.FindAllSubmatchIndex(body, -1) {
		if m[2] >= 0 {
			return false
		}
	}
	return utf8.Valid(body)
}

// decodePath reads body as the decision API does: Decode, then
// DecodeStrict into a reset request when Decode leaves it.
func decodePath(body []byte) (client.CheckRequest, error) {
	var req client.CheckRequest
	var cost int64
	if Decode(body, &req, &cost) {
		return req, nil
	}
	req = client.CheckRequest{}
	err := DecodeStrict(body, &req)
	return req, err
}

// agreesWithReference fails t unless body reads as the reference reads it:
// accepted into the same request or refused, with an error of at most 512
// bytes of UTF-8.
func agreesWithReference(t *testing.T, body []byte) {
	t.Helper()
	want, ok := referenceDecode(body)
	got, err := decodePath(body)
	switch {
	case ok && err != nil:
		t.Fatalf("%.80q: refused (%v), encoding/json reads %+v", body, err, want)
	case !ok && err == nil:
		t.Fatalf("%.80q: read %+v, encoding/json refuses it", body, got)
	case ok && !reflect.DeepEqual(got, want):
		t.Fatalf("%.80q: read %+v (cost %v), encoding/json %+v (cost %v)", body, got, ptr(got.Cost), want, ptr(want.Cost))
	case err != nil && (len(err.Error()) > 512 || !utf8.ValidString(err.Error())):
		t.Fatalf("%.80q: an error of %d bytes: %.120q", body, len(err.Error()), err)
	}
}

// edgeBodies are the bodies at the edges of what JSON and the decision API
// allow.
var edgeBodies = []string{
	// unknown fields, and known ones in another case, which encoding/json matches
	`{"colour":"red"}`, `{"USER":"u"}`, `{"Api_Key":"k"}`, `{"cOsT":3}`, `{"apikey":"k"}`, `{"user":"u","headers":{"X-A":"1"}}`,
	`{"user\u0000":"u"}`, `{"us\u0065r":"u"}`, `{"\u0075ser":"u"}`, `{"ſubject":"s"}`, `{"K":"k"}`,
	// duplicate keys: the last wins
	`{"user":"a","user":"b"}`, `{"cost":1,"cost":2}`, `{"user":"a","USER":"b"}`, `{"cost":1,"cost":null}`,
	`{"headers":{"a":"1"},"headers":{"b":"2"}}`, `{"headers":{"a":"1","a":"2"}}`, `{"headers":{"a":"1"},"HEADERS":{"b":"2"}}`,
	`{"headers":{"a":"1"},"headers":null}`, `{"headers":null,"headers":{"a":"1"}}`, `{"headers":{"a":"1"},"headerſ":{}}`,
	// trailing data
	`{"user":"u"} x`, `{"user":"u"}{}`, `{"user":"u"}}`, `{"user":"u"}]`, `{"user":"u"},`, `{"user":"u"}:`, `{"user":"u"} "x"`,
	`{"user":"u"} 1`, `{"user":"u"} null`, "{\"user\":\"u\"}\x00", "{\"user\":\"u\"}\xff", "{\"user\":\"u\"} \r\n\t ",
	"\ufeff{\"user\":\"u\"}", `{"user":"u"}/**/`, `{"user":"u",}`, `{,"user":"u"}`,
	// numbers in and out of range
	`{"cost":0}`, `{"cost":-0}`, `{"cost":9223372036854775807}`, `{"cost":-9223372036854775808}`,
	`{"cost":9223372036854775808}`, `{"cost":-9223372036854775809}`, `{"cost":999999999999999999}`,
	`{"cost":1000000000000000000}`, `{"cost":1e3}`, `{"cost":1E3}`, `{"cost":1.0}`, `{"cost":1.5}`, `{"cost":01}`,
	`{"cost":-01}`, `{"cost":+1}`, `{"cost":.5}`, `{"cost":-}`, `{"cost":0x10}`, `{"cost":1_000}`, `{"cost":NaN}`,
	`{"cost":Infinity}`, `{"cost":"5"}`, `{"cost":true}`, `{"cost":[]}`, `{"cost":{}}`, `{"cost":null}`, `{"cost":1e400}`,
	// strings: escapes, NUL, surrogates, UTF-8 valid and not
	`{"user":"a\u0000b"}`, `{"user":"\u00e9"}`, `{"user":"\ud83d\ude00"}`, `{"user":"\ud83d"}`, `{"user":"\ude00"}`,
	`{"user":"\ud83dx"}`, `{"user":"\ud83d\u0041"}`, `{"user":"\uD83D\uDE00"}`, `{"user":"\u12"}`, `{"user":"\x"}`,
	`{"user":"\/\b\f\n\r\t\"\\"}`, `{"user":"é"}`, "{\"user\":\"\xff\"}", "{\"user\":\"\xed\xa0\x80\"}",
	"{\"user\":\"\xc0\xaf\"}", "{\"user\":\"a\tb\"}", "{\"user\":\"a\x7fb\"}", "{\"user\":\"a\x00b\"}", "{\"\xff\":\"u\"}",
	`{"user":"\u2028"}`, `{"user":'u'}`, `{user:"u"}`,
	// strings that are not text: two of them would read as one (U+FFFD)
	"{\"subject\":\"a\xff\"}", "{\"subject\":\"a\xfe\"}", `{"subject":"b\ud800"}`, `{"subject":"b\udbff"}`,
	`{"subject":"b\udc00"}`, `{"user":"\ud800\ud800"}`, `{"user":"\ud800\\udc00"}`, `{"user":"\\\ud800"}`,
	`{"user":"\ud800"`, `{"user":"\uD800\uDC00"}`, `{"user":"\udbff\udfff"}`, `{"user":"\\ud800"}`,
	`{"user":"\\\\ud800"}`, `{"user":"\\uD800\\"}`, `{"headers":{"X-A":"\ud800"}}`, "{\"headers\":{\"\xfe\":\"1\"}}",
	`{"user":"\ud800","colour":1}`, "{\"user\":\"\xef\xbf\xbd\"}", `{"user":"\ufffd"}`, `{"token":"t\udfff"}`,
	// other types and shapes
	`{"user":null}`, `{"user":5}`, `{"user":true}`, `{"user":["u"]}`, `{"user":{}}`, `{"headers":null}`,
	`{"headers":{"a":5}}`, `{"headers":{"a":null}}`, `{"headers":[]}`, `{"headers":"x"}`, `[]`, `null`, `"x"`, `1`, `true`,
	``, ` `, `{`, `}`, `{"user"}`, `{"user":}`, `{"user":"u"`, `{"user" "u"}`, `{"user":"u" "ip":"1"}`, `{}`, ` { } `,
}

// TestDecodeAgreesWithEncodingJSON: each body at the edges reads as
// encoding/json reads it, through the fast decoder or around it.
func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	deep := strings.Repeat(`{"headers":`, 20_000)
	for _, body := range append(edgeBodies,
		`{"user":"`+strings.Repeat("a", 60_000)+`"}`,
		`{"cost":`+strings.Repeat("9", 60_000)+`}`,
		`{"headers":{"a":`+strings.Repeat("[", 20_000)+strings.Repeat("]", 20_000)+`}}`,
		deep+`{}`+strings.Repeat("}", 20_000),
		`{"user":"u",`+strings.Repeat(`"user":"u",`, 5_000)+`"ip":"1"}`,
	) {
		agreesWithReference(t, []byte(body))
	}
}

// FuzzCheckJSONDecodePath: any body reads as the decision API reads it —
// the fast decoder, encoding/json behind it — as encoding/json alone reads
// the body the API documents (one JSON object, no unknown fields): the same
// request or a refusal, whose error is short and UTF-8.
func FuzzCheckJSONDecodePath(f *testing.F) {
	for _, s := range edgeBodies {
		f.Add([]byte(s))
	}
	f.Fuzz(agreesWithReference)
}
