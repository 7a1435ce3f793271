package server

import (
	"fmt"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sluice-dev/sluice/envoy"
)

// TestEnvoyJSONBoundsCountWhatProtojsonReads: checkEnvoyJSONBounds counts
// a body's descriptors and entries as protojson reads them: a body
// protojson accepts is beyond the bounds exactly when its request is, in
// whatever spelling protobuf's JSON allows (either name of a field,
// escapes, whitespace, every field a descriptor may have).
func TestEnvoyJSONBoundsCountWhatProtojsonReads(t *testing.T) {
	entry := `{"key": "k", "value": "v"}`
	descriptor := func(entries int) string {
		return `{"limit": {"requests_per_unit": 3, "unit": "MINUTE", "unitMultiplier": 2}, "hits_addend": "4",
			"isNegativeHits": false, "entries": [` + strings.TrimSuffix(strings.Repeat(entry+",", entries), ",") + `]}`
	}
	request := func(descs []string) string {
		return ` { "hitsAddend" : 1, "descriptors" : [` + strings.Join(descs, ",\n") + `], "domain": "edge" } `
	}
	many := func(n int, d string) []string { return strings.Split(strings.Repeat(d+"\x00", n-1)+d, "\x00") }
	for _, tc := range []struct{ name, body string }{
		{"one descriptor", request(many(1, descriptor(1)))},
		{"descriptors at the bound", request(many(envoy.MaxDescriptors, descriptor(1)))},
		{"descriptors beyond it", request(many(envoy.MaxDescriptors+1, descriptor(1)))},
		{"entries at the bound", request(many(envoy.MaxDescriptors, descriptor(envoy.MaxEntries)))},
		{"entries beyond it", request(append(many(3, descriptor(1)), descriptor(envoy.MaxEntries+1)))},
		{"escaped names", `{"descr\u0069ptors": [{"\u0065ntries": [` + strings.Repeat(entry+",", envoy.MaxEntries) + entry + `]}], "domain": "edge"}`},
		{"no descriptors", `{"domain": "edge", "descriptors": null}`},
	} {
		var req rlsv3.RateLimitRequest
		if err := protojson.Unmarshal([]byte(tc.body), &req); err != nil {
			t.Fatalf("%s: protojson refuses the body: %v", tc.name, err)
		}
		beyond := len(req.GetDescriptors()) > envoy.MaxDescriptors
		for _, d := range req.GetDescriptors() {
			beyond = beyond || len(d.GetEntries()) > envoy.MaxEntries
		}
		b := checkEnvoyJSONBounds([]byte(tc.body))
		if (b.beyond != nil) != beyond || b.domain != "edge" {
			t.Errorf("%s: beyond %v, domain %q; the request has %d descriptors (beyond the bounds: %v), domain %q",
				tc.name, b.beyond, b.domain, len(req.GetDescriptors()), beyond, req.GetDomain())
		}
	}
}

// TestEnvoyJSONBoundsCountOnlyWhereProtojsonBuilds: what checkEnvoyJSONBounds
// does not count, protojson refuses before it makes anything of it — an
// "entries" or "descriptors" that is no field of its object, a value that is
// not an array, JSON nested deeper than a request — and a count that stops
// (not JSON, too deep) still refuses what it counted beyond the bounds.
// The domain is kept to envoy.MaxDomainBytes.
func TestEnvoyJSONBoundsCountOnlyWhereProtojsonBuilds(t *testing.T) {
	descs := func(n int) string { return strings.Repeat(`{},`, n-1) + `{}` }
	entries := func(n int) string { return `[{"entries": [` + descs(n) + `]}]` }
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	beyondDescs := fmt.Sprintf("%d descriptors, more than %d in one request", envoy.MaxDescriptors+1, envoy.MaxDescriptors)
	for _, tc := range []struct{ name, body, want string }{
		{"entries of a request", `{"entries": [` + descs(envoy.MaxEntries+1) + `]}`, ""},
		{"entries of a limit override", `{"descriptors": [{"limit": {"entries": [` + descs(envoy.MaxEntries+1) + `]}}]}`, ""},
		{"descriptors of a descriptor", `{"descriptors": [{"descriptors": [` + descs(envoy.MaxDescriptors+1) + `]}]}`, ""},
		{"descriptors that are an object", `{"descriptors": {"entries": ` + entries(envoy.MaxEntries+1) + `}}`, ""},
		{"a request that is an array", `[{"descriptors": [` + descs(envoy.MaxDescriptors+1) + `]}]`, ""},
		{"nested too deep before", `{"domain": ` + deep + `, "descriptors": [` + descs(envoy.MaxDescriptors+1) + `]}`, ""},
		{"nested too deep after", `{"descriptors": [` + descs(envoy.MaxDescriptors+1) + `], "domain": ` + deep + `}`, beyondDescs},
		{"not JSON after", `{"descriptors": [` + descs(envoy.MaxDescriptors+1) + `], "domain": edge}`, beyondDescs},
		{"not JSON within", `{"descriptors": [` + descs(envoy.MaxDescriptors+1) + `, {"entries": [}]}`, beyondDescs},
		{"a second value", `{"domain": "edge"} {"descriptors": [` + descs(envoy.MaxDescriptors+1) + `]}`, ""},
		{"descriptors named twice count together", `{"descriptors": ` + entries(envoy.MaxEntries+1) + `, "descriptors": [` + descs(envoy.MaxDescriptors) + `]}`, beyondDescs},
	} {
		b := checkEnvoyJSONBounds([]byte(tc.body))
		if got := fmt.Sprint(b.beyond); tc.want == "" && b.beyond != nil || tc.want != "" && got != tc.want {
			t.Errorf("%s: %v, want %q", tc.name, b.beyond, tc.want)
		}
		if tc.want == "" {
			var req rlsv3.RateLimitRequest
			if err := protojson.Unmarshal([]byte(tc.body), &req); err == nil {
				t.Errorf("%s: protojson reads the body, into %d descriptors", tc.name, len(req.GetDescriptors()))
			}
		}
	}
	long := strings.Repeat("d", envoy.MaxDomainBytes+1)
	if b := checkEnvoyJSONBounds([]byte(`{"domain": "` + long + `", "descriptors": [` + descs(envoy.MaxDescriptors+1) + `]}`)); b.domain != long[:envoy.MaxDomainBytes] {
		t.Errorf("a domain of %d bytes is kept as %d", len(long), len(b.domain))
	}
}
