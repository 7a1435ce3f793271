package server_test

import (
	"strconv"
	"testing"
)

// A /v1/settle body that gives "headers" twice, its name in any case, is
// read by its last, as /v1/check reads its own (docs/api.md), not the two
// merged as encoding/json merges them: the first's X-Usage-Tokens: 10,
// which the last lacks, settles nothing, and all 40 tokens the check
// charged stay counted, as for an answer without X-Usage-Tokens.
func TestSettleReadsTheLastHeadersMember(t *testing.T) {
	f := newFixture(t, settleConfig)
	for i, headers := range []string{
		`"headers":{"X-Usage-Tokens":"10"},"headers":{"X-Other":"1"}`,
		`"headers":{"X-Usage-Tokens":"10"},"HEADERS":{"X-Other":"1"}`,
		`"headers":{"X-Usage-Tokens":"10"},"headers":null`,
	} {
		subject := `"subject":"settle-last-` + strconv.Itoa(i) + `"`
		st, first, raw := postCheck(t, f, `{`+subject+`,"method":"POST","path":"/api/complete"}`)
		id, _ := first["settle"].(string)
		if st != 200 || id == "" {
			t.Fatalf("/v1/check: %d %s; want a settle id", st, raw)
		}
		r := f.do(t, "POST", "/v1/settle", `{"id":"`+id+`","status":200,`+headers+`}`, nil)
		if body := readAll(t, r); r.StatusCode != 200 {
			t.Fatalf("settle with %s: %d %s", headers, r.StatusCode, body)
		}
		_, peek, raw := postCheck(t, f, `{`+subject+`,"method":"POST","path":"/api/complete","cost":0}`)
		ls, _ := peek["limits"].([]any)
		if len(ls) == 0 {
			t.Fatalf("peek: %s", raw)
		}
		for _, l := range ls {
			if m := l.(map[string]any); m["name"] == "tokens" && m["remaining"] != float64(60) {
				t.Errorf("settled with %s: tokens remaining %v, want 60: the \"headers\" objects were merged", headers, m["remaining"])
			}
		}
	}
}
