package httplimit

import (
	"encoding/json"
	"strings"
	"testing"
)

func testProblem() *Problem {
	ra := int64(18)
	return &Problem{Type: ProblemQuotaExceeded, Title: "Too Many Requests", Status: 429, Detail: `Rate limit "exceeded".`,
		ViolatedPolicies: []string{"per-minute"}, RetryAfter: &ra, Policy: "per-minute", Limit: 100, Window: "1m", Plan: "free",
		CurrentUsage: &Usage{Used: 100, Limit: 100, Window: "1m", ResetsAt: "2026-11-30T12:00:18Z"},
		Upgrade:      &Upgrade{Plan: "pro", URL: "https://example.com/pricing"}}
}

func TestTemplateErrorCodeIsTheBriefsShape(t *testing.T) {
	tm, err := compileTemplate(TemplateErrorCode)
	if err != nil {
		t.Fatal(err)
	}
	got := string(tm.render(testProblem()))
	want := `{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"Rate limit \"exceeded\".","retryAfter":18,` +
		`"currentUsage":{"used":100,"limit":100,"window":"1m","resetsAt":"2026-11-30T12:00:18Z"},` +
		`"upgrade":{"plan":"pro","url":"https://example.com/pricing"}}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTemplatePlaceholders(t *testing.T) {
	p := testProblem()
	p.Upgrade, p.RetryAfter = nil, nil
	for _, c := range []struct{ src, want string }{
		{`{"wait": "{{retryAfter}}", "up": "{{upgrade}}"}`, `{"wait":null,"up":null}`},
		{`["{{limit}} per {{window}} on {{plan}}", "{{violated-policies}}", 1.50, true, null]`, `["100 per 1m on free",["per-minute"],1.50,true,null]`},
		{`{"msg": "see {{detail}}!", "s": "{{status}}", "k": {"{{plan}}": "x"}}`, `{"msg":"see Rate limit \"exceeded\".!","s":429,"k":{"{{plan}}":"x"}}`},
		{`{"none": "{{retryAfter}}s"}`, `{"none":"s"}`},
	} {
		tm, err := compileTemplate(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if got := string(tm.render(p)); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
	for src, want := range map[string]string{
		`{"a": "{{retry}}"}`: `{{retry}} is not a placeholder`,
		`{"a": }`:            "not JSON",
		`{"a": 1} {"b": 2}`:  "more than one JSON value",
		``:                   "empty",
		`{"a": [1e700]}`:     "number 1e700 is beyond",
		`{"a": -1e309}`:      "number -1e309 is beyond",
	} {
		if _, err := compileTemplate(src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", src, err, want)
		}
	}
}

// FuzzRefusalTemplate: a template that compiles renders valid JSON for any
// problem, and one without placeholders renders the same JSON value.
func FuzzRefusalTemplate(f *testing.F) {
	f.Add(TemplateErrorCode, "detail", int64(3))
	f.Add(`["{{plan}}{{limit}}x", {"k": "{{upgrade}}"}]`, "\x00\"\\", int64(-1))
	f.Add(`{"a": [1, 2.5e3, "x\u00e9"]}`, "", int64(0))
	f.Fuzz(func(t *testing.T, src, detail string, retry int64) {
		tm, err := compileTemplate(src)
		if err != nil {
			return
		}
		p := testProblem()
		p.Detail, p.Plan = detail, detail
		if retry < 0 {
			p.RetryAfter = nil
		} else {
			p.RetryAfter = &retry
		}
		out := tm.render(p)
		if !json.Valid(out) {
			t.Fatalf("template %q rendered invalid JSON %q", src, out)
		}
		if !strings.Contains(src, "{{") {
			var a, b any
			if json.Unmarshal([]byte(src), &a) != nil || json.Unmarshal(out, &b) != nil {
				t.Fatalf("template %q: %q", src, out)
			}
			if ja, jb := mustJSON(a), mustJSON(b); ja != jb {
				t.Fatalf("template %q without placeholders rendered %s, want %s", src, jb, ja)
			}
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
