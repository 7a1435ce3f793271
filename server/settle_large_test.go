package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// A settlement carries the answer's whole header, as Client.Settle sends
// it: a real answer of a hundred header fields and a 20 KiB
// Content-Security-Policy settles, and its usage header is counted.
func TestSettleTakesALargeAnswer(t *testing.T) {
	f := newFixture(t, settleConfig)
	var first struct {
		Settle string `json:"settle"`
	}
	if err := json.NewDecoder(f.do(t, "POST", "/v1/check", `{"subject":"s","method":"POST","path":"/api/complete"}`, nil).Body).Decode(&first); err != nil || first.Settle == "" {
		t.Fatalf("check: %v %+v", err, first)
	}
	headers := map[string]string{"X-Usage-Tokens": "10", "Content-Security-Policy": strings.Repeat("a", 20<<10)}
	for i := range 100 {
		headers[fmt.Sprintf("X-Field-%d", i)] = "v"
	}
	body, _ := json.Marshal(map[string]any{"id": first.Settle, "status": 200, "headers": headers})
	r := f.do(t, "POST", "/v1/settle", string(body), nil)
	if out := readAll(t, r); r.StatusCode != 200 {
		t.Fatalf("settle of a large answer: %d %s", r.StatusCode, out)
	}
}
