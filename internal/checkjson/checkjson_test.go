package checkjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/client"
)

// encodeJSON is the reference: what json.Encoder writes for v.
func encodeJSON(t testing.TB, v any) string {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCheckJSONMatchesEncodingJSON(t *testing.T) {
	odd := "a<b>&\"\\\x00\x01\b\f\n\r\t\x1f\x7f é \u2028\u2029 \xff\xfe 😀 \xed\xa0\x80"
	cases := map[string]client.CheckResponse{
		"an empty response keeps its required fields": {},
		"an exempt endpoint":                          {Allowed: true, Identity: "api-key", Exempt: true},
		"an admitted request with every limit and header": {Allowed: true, Identity: "api-key", Plan: "free", Cost: 2,
			Limit: "per-minute", Remaining: 1, ResetAfterMs: 60000, DelayMs: 5,
			Limits: []client.LimitStatus{
				{Name: "per-second", Algorithm: "gcra", Quantity: 10, Window: "1s", Burst: 20, Allowed: true, Remaining: 19, ResetAfterMs: 100},
				{Name: "global", Algorithm: "fixed-window", Quantity: 1 << 40, Window: "1d", Burst: 1 << 40, Shadow: true,
					Global: true, Allowed: true, Remaining: -1, ResetAfterMs: 1},
			},
			Headers: map[string]string{"Ratelimit": `"per-minute";r=1;t=60`, "Ratelimit-Policy": `"per-minute";q=3;w=60`,
				"X-Ratelimit-Limit": "3", "A": ""}, Settle: "q7Xz-settle_id"},
		"a refused request": {Identity: "user", Plan: "p", Cost: 1, Limit: "l", RetryAfter: 60, RetryAfterMs: 59001,
			Violated: []string{"l", "m"}, Limits: []client.LimitStatus{{Name: "l", Allowed: false, RetryAfterMs: 59001}}},
		"strings that need escaping": {Identity: odd, Plan: odd, Limit: odd, Violated: []string{odd, ""},
			Limits:  []client.LimitStatus{{Name: odd, Algorithm: odd, Window: odd}},
			Headers: map[string]string{odd: odd, "<": "&"}},
		"empty slices and maps are left out": {Violated: []string{}, Limits: []client.LimitStatus{}, Headers: map[string]string{}},
		"negative and extreme numbers": {Cost: -1 << 63, Remaining: 1<<63 - 1, ResetAfterMs: -5, RetryAfter: -1,
			RetryAfterMs: -2, DelayMs: -3},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			want := encodeJSON(t, c)
			if got := string(AppendResponse(nil, &c, new([]string))); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestHTMLSafeIsEncodingJSONs(t *testing.T) {
	for c := range byte(utf8.RuneSelf) {
		want := encodeJSON(t, string(c)) == "\""+string(c)+"\"\n"
		if htmlSafe(c) != want {
			t.Errorf("%q: htmlSafe %v, encoding/json writes it as it is: %v", c, htmlSafe(c), want)
		}
	}
}

// FuzzCheckJSONString: every string is written as encoding/json writes it.
func FuzzCheckJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "<&>", "\x00\x1f\x7f", "\xff", "\u2028", "é😀", "\xed\xa0\x80", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := encodeJSON(t, s)
		if got := string(appendJSONString(nil, s)) + "\n"; got != want {
			t.Fatalf("%q: got %s want %s", s, got, want)
		}
	})
}

// FuzzCheckJSONDecode: a body the fast decoder reads is one encoding/json
// reads too, into the same request; any other is left to encoding/json.
func FuzzCheckJSONDecode(f *testing.F) {
	for _, s := range []string{
		`{"api_key":"k","method":"GET","path":"/v1/items"}`, ` { "user" : "u" , "cost" : 3 } `, `{}`, `{"cost":-0}`,
		`{"cost":01}`, `{"cost":1.5}`, `{"cost":1e3}`, `{"cost":123456789012345678}`, `{"cost":1234567890123456789}`,
		`{"user":"a","user":"b"}`, `{"USER":"u"}`, `{"user":"u\"v"}`, `{"user":"é"}`, `{"user":null}`, `{"cost":null}`,
		`{"user":"u"} x`, `{"user":"u"}{}`, `{"user":"u",}`, `{"colour":"red"}`, `{"user":5}`, `{"cost":"5"}`, `{"user":"u"`,
		`[]`, ``, `{"cost":-}`, `{"user":"u"}` + "\n", "{\"user\":\"a\xff\"}", `{"user":"\ud800"}`, `{"user":"\\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast client.CheckRequest
		var cost int64
		if !Decode(body, &fast, &cost) {
			return
		}
		var ref client.CheckRequest
		if err := DecodeStrict(body, &ref); err != nil {
			t.Fatalf("%q: the fast decoder read %+v, encoding/json says %v", body, fast, err)
		}
		if !reflect.DeepEqual(fast, ref) {
			t.Fatalf("%q: fast %+v (cost %v), encoding/json %+v (cost %v)", body, fast, ptr(fast.Cost), ref, ptr(ref.Cost))
		}
	})
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestDecodeCheckFastReadsTheUsualBodies(t *testing.T) {
	for _, body := range []string{
		`{"api_key":"bench-key-1","method":"GET","path":"/v1/items"}`,
		`{"user":"u1","cost":3}`, `{"subject":"batch","cost":0}`, `{"ip":"2001:db8::1","plan":"pro"}`,
		"{\n  \"user\": \"u\",\n  \"method\": \"POST\"\n}\n",
	} {
		var req client.CheckRequest
		var cost int64
		if !Decode([]byte(body), &req, &cost) {
			t.Errorf("%s: left to encoding/json", strings.TrimSpace(body))
		}
	}
}

// FuzzCheckJSONResponse: every response is written byte for byte as
// json.Encoder writes it.
func FuzzCheckJSONResponse(f *testing.F) {
	f.Add(true, "api-key", "free", "per-minute", "", "a,b", "Ratelimit=x;Y=<&>", int64(1), int64(-1), int64(0), uint8(3))
	f.Add(false, "\xff\u2028", "", "l", "id", "", "=", int64(-1<<63), int64(1<<63-1), int64(5), uint8(0))
	f.Add(false, "", "high", "", "https://iana.org/x#y", "The service is <overloaded>.", "", int64(2), int64(0), int64(0), uint8(128))
	f.Fuzz(func(t *testing.T, allowed bool, identity, plan, limit, settle, violated, headers string, a, b, c int64, shape uint8) {
		r := client.CheckResponse{Allowed: allowed, Identity: identity, Plan: plan, Cost: a, Exempt: shape&1 != 0, Limit: limit,
			Remaining: b, ResetAfterMs: c, RetryAfter: a ^ b, RetryAfterMs: b ^ c, DelayMs: c ^ a, Settle: settle}
		if shape&2 != 0 {
			r.Violated = strings.Split(violated, ",")
		}
		if shape&128 != 0 { // a shed request's answer
			r.Type, r.Detail, r.Level = settle, violated, plan
		}
		if shape&4 != 0 {
			r.Headers = map[string]string{}
			for kv := range strings.SplitSeq(headers, ";") {
				k, v, _ := strings.Cut(kv, "=")
				r.Headers[k] = v
			}
		}
		for i := range int(shape >> 3 & 3) {
			r.Limits = append(r.Limits, client.LimitStatus{Name: limit, Algorithm: identity, Quantity: a + int64(i), Window: plan,
				Burst: b, Shadow: shape&32 != 0, Global: i == 1, Allowed: shape&64 != 0, Remaining: c, ResetAfterMs: a ^ c,
				RetryAfterMs: int64(i) * b})
		}
		want := encodeJSON(t, r)
		if got := string(AppendResponse(nil, &r, new([]string))); got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

// A body's error names what is wrong in a few hundred bytes at most, in
// UTF-8: neither a field's value nor an unknown field's name is echoed
// whole (a number of 60,000 digits, or a name of 60,000 bytes, is a 400
// whose detail would otherwise carry it back).
func TestDecodeStrictErrorsAreShort(t *testing.T) {
	huge := strings.Repeat("9", 60_000)
	for _, body := range []string{
		`{"api_key": "k", "cost": ` + huge + `}`,
		`{"api_key": "k", "cost": -` + huge + `}`,
		`{"api_key": "k", "cost": "` + huge + `"}`,
		`{"api_key": ` + huge + `}`,
		`{"` + huge + `": 1}`,
		`{"api_key": "k", "` + strings.Repeat("é", 30_000) + `": "v"}`,
	} {
		var req client.CheckRequest
		err := DecodeStrict([]byte(body), &req)
		if err == nil {
			t.Fatalf("%.40s…: no error", body)
		}
		if len(err.Error()) > 512 {
			t.Errorf("%.40s…: an error of %d bytes, want at most 512: %.120s…", body, len(err.Error()), err)
		}
		if !utf8.ValidString(err.Error()) {
			t.Errorf("%.40s…: an error that is not UTF-8: %q", body, err)
		}
	}
}
