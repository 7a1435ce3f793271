package httplimit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// TemplateErrorCode is a RefusalTemplate that answers refusals in the
// shape of many APIs' own errors:
//
//	{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit exceeded: …",
//	  "retryAfter":18,"currentUsage":{"used":100,"limit":100,"window":"1m","resetsAt":"…"},
//	  "upgrade":{"plan":"pro","url":"https://example.com/pricing"}}}
const TemplateErrorCode = `{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"{{detail}}","retryAfter":"{{retryAfter}}",` +
	`"currentUsage":"{{currentUsage}}","upgrade":"{{upgrade}}"}}`

// templateFields are the placeholders of a RefusalTemplate: the members
// of the Problem a refusal would send, by their JSON names.
var templateFields = []string{"type", "title", "status", "detail", "instance", "violated-policies", "retryAfter",
	"policy", "limit", "window", "plan", "currentUsage", "upgrade", "documentation"}

// template is a compiled RefusalTemplate: literal JSON text and
// placeholders, in order.
type template struct {
	parts []templatePart
}

// templatePart is literal JSON text (name empty), or a placeholder: a
// whole JSON value, or text inside a string (quoted).
type templatePart struct {
	lit    string
	name   string
	quoted bool
}

// compileTemplate parses a RefusalTemplate: one JSON value, in which a
// string that is exactly "{{name}}" stands for the member name's value as
// JSON (null when the problem has none) and "{{name}}" inside a longer
// string for its text. Object keys are literal.
func compileTemplate(src string) (*template, error) {
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	t := &template{}
	type frame struct {
		object bool
		n      int
	}
	var stack []frame
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			t.parts = append(t.parts, templatePart{lit: lit.String()})
			lit.Reset()
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not JSON: %w", err)
		}
		isKey := false
		if d, ok := tok.(json.Delim); !ok || d == '{' || d == '[' {
			if len(stack) > 0 {
				top := &stack[len(stack)-1]
				isKey = top.object && top.n%2 == 0
				switch {
				case isKey && top.n > 0, !top.object && top.n > 0:
					lit.WriteByte(',')
				case top.object && !isKey:
					lit.WriteByte(':')
				}
				top.n++
			} else if len(t.parts) > 0 || lit.Len() > 0 {
				return nil, errors.New("more than one JSON value")
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			lit.WriteRune(rune(v))
			if v == '{' || v == '[' {
				stack = append(stack, frame{object: v == '{'})
			} else {
				stack = stack[:len(stack)-1]
			}
		case string:
			if isKey {
				b, _ := json.Marshal(v)
				lit.Write(b)
				continue
			}
			if err := t.addString(v, &lit, flush); err != nil {
				return nil, err
			}
		case json.Number:
			// Clients read numbers as IEEE doubles (JavaScript, Go's
			// float64): one beyond them is an error or an Infinity there.
			if f, err := v.Float64(); err != nil || math.IsInf(f, 0) {
				return nil, fmt.Errorf("number %s is beyond what a client's JSON reader holds (an IEEE double)", v)
			}
			lit.WriteString(v.String())
		default:
			b, _ := json.Marshal(v)
			lit.Write(b)
		}
	}
	flush()
	switch {
	case len(stack) > 0:
		return nil, errors.New("not JSON: unexpected end")
	case len(t.parts) == 0:
		return nil, errors.New("empty")
	}
	return t, nil
}

// addString compiles one string value of a template.
func (t *template) addString(s string, lit *strings.Builder, flush func()) error {
	if name, ok := placeholder(s); ok && len(name)+4 == len(s) {
		if err := knownField(name); err != nil {
			return err
		}
		flush()
		t.parts = append(t.parts, templatePart{name: name})
		return nil
	}
	lit.WriteByte('"')
	for s != "" {
		i := strings.Index(s, "{{")
		j := strings.Index(s[max(i, 0):], "}}")
		if i < 0 || j < 0 {
			writeJSONText(lit, s)
			break
		}
		writeJSONText(lit, s[:i])
		name := s[i+2 : i+j]
		if err := knownField(name); err != nil {
			return err
		}
		flush()
		t.parts = append(t.parts, templatePart{name: name, quoted: true})
		s = s[i+j+2:]
	}
	lit.WriteByte('"')
	return nil
}

// placeholder returns the name of a string that starts with one.
func placeholder(s string) (string, bool) {
	if !strings.HasPrefix(s, "{{") {
		return "", false
	}
	end := strings.Index(s, "}}")
	if end < 0 {
		return "", false
	}
	return s[2:end], true
}

func knownField(name string) error {
	for _, f := range templateFields {
		if f == name {
			return nil
		}
	}
	return fmt.Errorf("{{%s}} is not a placeholder (%s)", name, strings.Join(templateFields, ", "))
}

// writeJSONText writes s as the inside of a JSON string.
func writeJSONText(b *strings.Builder, s string) {
	q, _ := json.Marshal(s)
	b.Write(q[1 : len(q)-1])
}

// render writes the template's body for p.
func (t *template) render(p *Problem) []byte {
	var fields map[string]json.RawMessage
	raw, _ := json.Marshal(p) // a Problem always marshals
	json.Unmarshal(raw, &fields)
	var out []byte
	for _, part := range t.parts {
		switch v, ok := fields[part.name]; {
		case part.name == "":
			out = append(out, part.lit...)
		case !ok && part.quoted:
		case !ok:
			out = append(out, "null"...)
		case part.quoted && len(v) > 0 && v[0] == '"':
			out = append(out, v[1:len(v)-1]...) // already escaped for a string
		case part.quoted:
			q, _ := json.Marshal(string(v))
			out = append(out, q[1:len(q)-1]...)
		default:
			out = append(out, v...)
		}
	}
	return out
}

// writeTemplate sends p's figures in t's shape, with p's status and
// headers (see writeProblem).
func writeTemplate(w http.ResponseWriter, t *template, p *Problem) {
	body := append(t.render(p), '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	if p.RetryAfter != nil {
		h.Set("Retry-After", strconv.FormatInt(*p.RetryAfter, 10))
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(p.Status)
	w.Write(body)
}

// onlyGlobal reports whether every limit that refused res is a global one.
func (m *Middleware) onlyGlobal(res *Result) bool {
	if len(res.Decision.Violated) == 0 {
		return false
	}
	for _, name := range res.Decision.Violated {
		if !m.isGlobal(name) {
			return false
		}
	}
	return true
}

// writeBody sends p as the configured body: the template's, else the
// problem. A gRPC or gRPC-Web call (see grpcCall) always gets the problem:
// it reads no body, and a layer that answers it as gRPC (sluice serve's
// proxy) states the problem's figures in the call's status.
func (m *Middleware) writeBody(w http.ResponseWriter, r *http.Request, p *Problem) {
	if m.template != nil && !grpcCall(r) {
		writeTemplate(w, m.template, p)
	} else {
		writeProblem(w, p)
	}
}
