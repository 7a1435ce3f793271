// Package checkjson reads and writes the decision API's JSON
// (client.CheckRequest in, client.CheckResponse out; docs/api.md) without
// reflection.
//
// Why it exists: encoding/json's reflection was most of what one decision
// API call cost in process (BenchmarkDecisionAPI in package server). Why it
// can be trusted: encoding/json stays the reference. Decode reads only a
// shape it can read with certainty and reports false for anything else, for
// the caller to hand to encoding/json, which then decides and says what is
// wrong; AppendResponse writes byte for byte what json.Encoder writes. The
// fuzz targets beside it hold both properties against encoding/json on
// arbitrary input: FuzzCheckJSONDecode and FuzzCheckJSONDecodePath what is
// read, FuzzCheckJSONString and FuzzCheckJSONResponse what is written.
package checkjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sluice-dev/sluice/client"
)

// Decode reads the usual shape of a decision API body into req,
// exactly as encoding/json would: one flat object whose members are known
// field names spelled exactly (as in their JSON tags), with string values of
// printable ASCII and no escapes, and a cost that is a plain integer of at
// most 18 digits; whitespace around tokens and duplicate members (the last
// wins) as JSON allows. It reports false for anything else — escapes, other
// bytes, names in another case, unknown fields, null, other types, anything
// after the object, malformed JSON — and req may then hold part of the body:
// reset it and let encoding/json decide and say what is wrong. cost is where
// req.Cost points when the body sets it.
func Decode(b []byte, req *client.CheckRequest, cost *int64) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		name, j, ok := plainString(b, i)
		if !ok {
			return false
		}
		i = skipSpace(b, j)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipSpace(b, i+1)
		if string(name) == "cost" {
			v, j, ok := plainInt(b, i)
			if !ok {
				return false
			}
			*cost, req.Cost, i = v, cost, j
		} else {
			dst := stringField(req, name)
			if dst == nil {
				return false
			}
			v, j, ok := plainString(b, i)
			if !ok {
				return false
			}
			*dst, i = internMethod(v), j
		}
		i = skipSpace(b, i)
		switch {
		case i >= len(b):
			return false
		case b[i] == ',':
			i = skipSpace(b, i+1)
		case b[i] == '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// stringField is the string field of req that the JSON name names, or nil.
func stringField(req *client.CheckRequest, name []byte) *string {
	switch string(name) {
	case "subject":
		return &req.Subject
	case "api_key":
		return &req.APIKey
	case "token":
		return &req.Token
	case "user":
		return &req.User
	case "ip":
		return &req.IP
	case "plan":
		return &req.Plan
	case "method":
		return &req.Method
	case "path":
		return &req.Path
	case "host":
		return &req.Host
	}
	return nil
}

// internMethod returns v as a string, without allocating for the usual
// HTTP methods.
func internMethod(v []byte) string {
	switch string(v) {
	case "GET":
		return "GET"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "PATCH":
		return "PATCH"
	case "DELETE":
		return "DELETE"
	case "HEAD":
		return "HEAD"
	}
	return string(v)
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads the JSON string at b[i:] if it holds only printable
// ASCII without escapes, and returns its contents and the index after it.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c > 0x7e:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// plainInt reads the JSON integer at b[i:] (no fraction, no exponent, at
// most 18 digits, no leading zero) and returns it and the index after it.
func plainInt(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	n := i - start
	if n == 0 || n > 18 || n > 1 && b[start] == '0' {
		return 0, 0, false
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
		return 0, 0, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// AppendResponse appends r as json.Encoder (HTML escaping on) encodes
// it, with its trailing newline. keys is scratch space for sorting the
// headers' names.
func AppendResponse(b []byte, r *client.CheckResponse, keys *[]string) []byte {
	b = append(b, `{"allowed":`...)
	b = strconv.AppendBool(b, r.Allowed)
	b = append(b, `,"identity":`...)
	b = appendJSONString(b, r.Identity)
	if r.Plan != "" {
		b = append(b, `,"plan":`...)
		b = appendJSONString(b, r.Plan)
	}
	b = appendIntField(b, `,"cost":`, r.Cost)
	if r.Exempt {
		b = append(b, `,"exempt":true`...)
	}
	if r.Limit != "" {
		b = append(b, `,"limit":`...)
		b = appendJSONString(b, r.Limit)
	}
	b = appendIntField(b, `,"remaining":`, r.Remaining)
	b = appendIntField(b, `,"resetAfterMs":`, r.ResetAfterMs)
	if r.RetryAfter != 0 {
		b = appendIntField(b, `,"retryAfter":`, r.RetryAfter)
	}
	if r.RetryAfterMs != 0 {
		b = appendIntField(b, `,"retryAfterMs":`, r.RetryAfterMs)
	}
	if r.DelayMs != 0 {
		b = appendIntField(b, `,"delayMs":`, r.DelayMs)
	}
	if len(r.Violated) > 0 {
		b = append(b, `,"violated":[`...)
		for i, v := range r.Violated {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, v)
		}
		b = append(b, ']')
	}
	if len(r.Limits) > 0 {
		b = append(b, `,"limits":[`...)
		for i := range r.Limits {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendLimitStatus(b, &r.Limits[i])
		}
		b = append(b, ']')
	}
	if len(r.Headers) > 0 {
		ks := (*keys)[:0]
		for k := range r.Headers {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		*keys = ks
		b = append(b, `,"headers":{`...)
		for i, k := range ks {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			b = appendJSONString(b, r.Headers[k])
		}
		b = append(b, '}')
	}
	for _, f := range [...]struct{ name, v string }{{`,"type":`, r.Type}, {`,"detail":`, r.Detail}, {`,"level":`, r.Level}} {
		if f.v != "" {
			b = append(b, f.name...)
			b = appendJSONString(b, f.v)
		}
	}
	if r.Settle != "" {
		b = append(b, `,"settle":`...)
		b = appendJSONString(b, r.Settle)
	}
	return append(b, "}\n"...)
}

func appendLimitStatus(b []byte, l *client.LimitStatus) []byte {
	b = append(b, `{"name":`...)
	b = appendJSONString(b, l.Name)
	b = append(b, `,"algorithm":`...)
	b = appendJSONString(b, l.Algorithm)
	b = appendIntField(b, `,"quantity":`, l.Quantity)
	b = append(b, `,"window":`...)
	b = appendJSONString(b, l.Window)
	b = appendIntField(b, `,"burst":`, l.Burst)
	if l.Shadow {
		b = append(b, `,"shadow":true`...)
	}
	if l.Global {
		b = append(b, `,"global":true`...)
	}
	b = append(b, `,"allowed":`...)
	b = strconv.AppendBool(b, l.Allowed)
	b = appendIntField(b, `,"remaining":`, l.Remaining)
	b = appendIntField(b, `,"resetAfterMs":`, l.ResetAfterMs)
	if l.RetryAfterMs != 0 {
		b = appendIntField(b, `,"retryAfterMs":`, l.RetryAfterMs)
	}
	return append(b, '}')
}

func appendIntField(b []byte, name string, v int64) []byte {
	return strconv.AppendInt(append(b, name...), v, 10)
}

// appendJSONString appends s as a JSON string the way encoding/json does
// with HTML escaping (json.Encoder's default): '<', '>' and '&' as \u003c,
// \u003e and \u0026, control bytes as short or \u00XX escapes, invalid UTF-8
// as \ufffd, U+2028 and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if htmlSafe(c) {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			start = i + size
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			start = i + size
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// htmlSafe reports whether the ASCII byte c goes into a JSON string as it
// is under HTML escaping: printable and not '"', '\\', '<', '>' or '&'. The
// two masks hold one bit per byte value, 0–63 and 64–127.
func htmlSafe(c byte) bool {
	const (
		lo uint64 = 0xafff_ffbb_0000_0000 // 0x20–0x3f but '"' (0x22), '&' (0x26), '<' (0x3c), '>' (0x3e)
		hi uint64 = 0xffff_ffff_efff_ffff // 0x40–0x7f but '\\' (0x5c)
	)
	if c < 64 {
		return lo>>c&1 == 1
	}
	return hi>>(c-64)&1 == 1
}

// ReadBody appends what r yields to b until EOF (not an error) or an error.
func ReadBody(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
	}
}

// DecodeStrict decodes body into req with encoding/json: the reference
// for what Decode reads, and the one that says what is wrong. The body must
// be exactly one JSON object with no unknown fields (encoding/json's
// DisallowUnknownFields), whose strings are text: UTF-8, without a
// \uD800–\uDFFF escape outside a surrogate pair (see Text). encoding/json
// would read either as U+FFFD, making "a\xff" and "a\xfe" one client. All
// else is encoding/json's: names matched in any case, duplicate members
// (the last wins). encoding/json merges two objects of one map member
// rather than keep the last: DecodeStrict reads a "headers" given twice (in
// any case) as its last (LastHeaders), so that a header of an earlier one,
// which the body's last "headers" lacks, describes nothing. Its error is at
// most a few hundred bytes, whatever the body.
func DecodeStrict(body []byte, req *client.CheckRequest) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(req); err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("empty body: send a JSON object, e.g. {\"api_key\": \"...\", \"method\": \"GET\", \"path\": \"/api/search\"}")
		}
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
			// Its message quotes the value, which may be as long as the body.
			return fmt.Errorf("malformed JSON: %s: %s where %v was expected", te.Field, shortValue(te.Value), te.Type)
		}
		if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			// Its message quotes the name, which may be as long as the body.
			return fmt.Errorf("malformed JSON: json: unknown field %s", shortValue(name))
		}
		return fmt.Errorf("malformed JSON: %w", err)
	}
	if dec.More() {
		return errors.New("malformed JSON: more than one value in the body")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("malformed JSON: data after the object")
	}
	if err := Text(body); err != nil {
		return err // valid JSON, not malformed: its strings are not text
	}
	if req.Headers == nil {
		return nil // no "headers", or the last is null: nothing merged
	}
	if last, twice := LastHeaders(body); twice {
		req.Headers = nil
		if err := json.Unmarshal(last, &req.Headers); err != nil {
			return fmt.Errorf("malformed JSON: headers: %w", err) // decoded once already: never
		}
	}
	return nil
}

// LastHeaders returns the value of the last "headers" member (its name in
// any case, as encoding/json matches it) of body, a JSON object that
// decodes into a value with a "headers" map (a /v1/check or /v1/settle
// body), and whether body gives that member more than once: the value to
// read the map from when encoding/json, which merges the objects, read it
// from more than one.
func LastHeaders(body []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if _, err := dec.Token(); err != nil { // {
		return nil, false
	}
	var last json.RawMessage
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if name, _ := tok.(string); strings.EqualFold(name, "headers") {
			last, n = v, n+1
		}
	}
	return last, n > 1
}

// Text returns nil if every string of body, one JSON value (json.Valid),
// is text: UTF-8 throughout, and each \uD800–\uDBFF escape followed by a
// \uDC00–\uDFFF one, a surrogate pair, and no \uDC00–\uDFFF escape
// otherwise. Else its error names the top-level member whose value holds
// the first string that is not (a name that is not is an unknown field to
// a request, refused before). encoding/json reads such a string with
// U+FFFD for the byte or the escape, so that two different ones read the
// same.
func Text(body []byte) error {
	if text(body) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err == nil && tok == json.Delim('{') {
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				break
			}
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				break
			}
			if s, _ := name.(string); !text(v) {
				return fmt.Errorf("%s: %s", shortValue(strconv.Quote(s)), notText)
			}
		}
	}
	return errors.New(notText)
}

// notText is Text's error: what a string that is not text holds.
const notText = "a string that is not text: a byte outside UTF-8, or a \\uD800–\\uDFFF escape outside a surrogate pair"

// text reports whether b, JSON in which every backslash is in a string
// and starts an escape (as in any JSON value), is UTF-8 with each
// surrogate escape in a pair. Escapes are read whole from the first
// backslash on, so that the "uD800" after an escaped backslash ("\\uD800")
// is read as the text it is.
func text(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return true
		}
		n := escapeLen(b[i+j:])
		if n == 0 {
			return false
		}
		i += j + n
	}
}

// escapeLen returns the length of the escape that e starts with (at its
// backslash): 12 for a surrogate pair, 0 for a surrogate escape outside a
// pair or an escape cut short.
func escapeLen(e []byte) int {
	if len(e) < 2 {
		return 0
	}
	if e[1] != 'u' {
		return 2
	}
	switch r := hex4(e[2:]); {
	case r < 0 || r >= 0xdc00 && r <= 0xdfff:
		return 0
	case r < 0xd800 || r > 0xdbff:
		return 6
	}
	if len(e) < 12 || e[6] != '\\' || e[7] != 'u' {
		return 0
	}
	if lo := hex4(e[8:]); lo < 0xdc00 || lo > 0xdfff {
		return 0
	}
	return 12
}

// hex4 is the value of the 4 hex digits b starts with, or -1.
func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	v := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	return v
}

// shortValue is v, encoding/json's description of a value ("number 42")
// or a quoted field name, cut to at most 40 bytes at the start of a UTF-8
// sequence.
func shortValue(v string) string {
	if len(v) <= 40 {
		return v
	}
	n := 40
	for n > 0 && !utf8.RuneStart(v[n]) {
		n--
	}
	return v[:n] + "…"
}
