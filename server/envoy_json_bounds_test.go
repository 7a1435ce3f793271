package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sluice-dev/sluice/envoy"
)

// TestEnvoyJSONBeyondTheBoundsIsRefusedBeforeItIsBuilt: POST /json takes a
// megabyte from the callers of the gRPC service, whose codec refuses a
// request beyond its bounds (more than envoy.MaxDescriptors descriptors, a
// descriptor of more than envoy.MaxEntries entries) once it has counted
// them, without a message made for each (docs/envoy.md). /json refuses
// such a body the same way: 400 with the codec's reason, for about what
// reading the body costs — not the 50 MB and more protojson would make of
// a megabyte of empty descriptors or entries — however its names are
// spelled and whether or not the JSON ends.
func TestEnvoyJSONBeyondTheBoundsIsRefusedBeforeItIsBuilt(t *testing.T) {
	base := startEnvoyJSON(t, jsonRules)
	const size = 1<<20 - 100
	n := (size - 60) / 3 // empty elements of 3 bytes ("{},") that fit
	empties := strings.Repeat("{},", n) + "{}"
	for _, tc := range []struct{ name, body, want string }{
		{"empty descriptors", `{"domain":"edge","descriptors":[` + empties + `]}`,
			fmt.Sprintf("%d descriptors, more than %d in one request", n+1, envoy.MaxDescriptors)},
		{"empty entries", `{"domain":"edge","descriptors":[{"entries":[` + empties + `]}]}`,
			fmt.Sprintf("descriptor 0: %d entries, more than %d", n+1, envoy.MaxEntries)},
		{"empty entries of a second descriptor", `{"domain":"edge","descriptors":[{"entries":[{"key":"a"}]},{"entries":[` + empties + `]}]}`,
			fmt.Sprintf("descriptor 1: %d entries, more than %d", n+1, envoy.MaxEntries)},
		{"a name spelled with an escape", `{"domain":"edge","descr\u0069ptors":[` + empties + `]}`,
			fmt.Sprintf("%d descriptors, more than %d in one request", n+1, envoy.MaxDescriptors)},
		{"JSON that does not end", `{"domain":"edge","descriptors":[` + empties,
			fmt.Sprintf("%d descriptors, more than %d in one request", n+1, envoy.MaxDescriptors)},
	} {
		if len(tc.body) > 1<<20 {
			t.Fatalf("%s: body of %d bytes", tc.name, len(tc.body))
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		status, _, body := postJSON(t, base+"/json", testToken, tc.body)
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc - before
		if status != http.StatusBadRequest || !strings.Contains(body, `"invalid request: `+tc.want+`"`) {
			t.Errorf("%s: %d %.300s, want 400 invalid request: %s", tc.name, status, body, tc.want)
		}
		// Reading, sending and answering the body is a few megabytes.
		if alloc > 16<<20 {
			t.Errorf("%s: a refused body of %d KiB allocated %d MiB", tc.name, len(tc.body)>>10, alloc>>20)
		}
	}
}

// TestEnvoyJSONRefusesBeyondTheBoundsAsGRPCDoes: a request just beyond
// the bounds is answered by POST /json (400) with the reason the gRPC
// service answers it with (InvalidArgument).
func TestEnvoyJSONRefusesBeyondTheBoundsAsGRPCDoes(t *testing.T) {
	srv := startEnvoy(t, jsonRules)
	admin := httptest.NewServer(srv.AdminHandler())
	t.Cleanup(admin.Close)
	client := envoyClient(t, srv)
	for _, tc := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
	}{
		{"one descriptor too many", envoyRequest(envoy.MaxDescriptors+1, 1, -1)},
		{"one entry too many", envoyRequest(envoy.MaxDescriptors, envoy.MaxEntries, 5)},
	} {
		_, err := client.ShouldRateLimit(context.Background(), tc.req)
		st := grpcstatus.Convert(err)
		if st.Code() != codes.InvalidArgument {
			t.Fatalf("%s: gRPC %v, want InvalidArgument", tc.name, err)
		}
		body, err := protojson.Marshal(tc.req)
		if err != nil {
			t.Fatal(err)
		}
		status, _, answer := postJSON(t, admin.URL+"/json", testToken, string(body))
		var problem struct{ Detail string }
		json.Unmarshal([]byte(answer), &problem)
		if status != http.StatusBadRequest || problem.Detail != st.Message() {
			t.Errorf("%s: /json %d %.300s, want 400 %q as gRPC", tc.name, status, answer, st.Message())
		}
	}
}

// TestEnvoyJSONAtTheBoundsIsDecided: a request of envoy.MaxDescriptors
// descriptors of envoy.MaxEntries entries each is within the bounds, and
// decided by /json as by the gRPC service.
func TestEnvoyJSONAtTheBoundsIsDecided(t *testing.T) {
	base := startEnvoyJSON(t, jsonRules)
	req := envoyRequest(envoy.MaxDescriptors, envoy.MaxEntries, -1)
	// The first descriptor is the rules' own, limited to 2 a minute.
	req.Descriptors[0] = &ratelimitv3.RateLimitDescriptor{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{
		{Key: "remote_address", Value: "198.51.100.7"}}}
	body, err := protojson.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	status, _, answer := postJSON(t, base+"/json", testToken, string(body))
	var resp rlsv3.RateLimitResponse
	if err := protojson.Unmarshal([]byte(answer), &resp); err != nil {
		t.Fatalf("%d %.300s: %v", status, answer, err)
	}
	if status != http.StatusOK || resp.GetOverallCode() != rlsv3.RateLimitResponse_OK ||
		len(resp.GetStatuses()) != envoy.MaxDescriptors || resp.GetStatuses()[0].GetLimitRemaining() != 1 {
		t.Errorf("%d %.300s, want 200 OK with %d statuses, the first with 1 remaining", status, answer, envoy.MaxDescriptors)
	}
}

// envoyRequest returns a request of domain edge with descriptors
// descriptors of entries entries each, but for the descriptor at index
// wide (none when -1), which has one more.
func envoyRequest(descriptors, entries, wide int) *rlsv3.RateLimitRequest {
	req := &rlsv3.RateLimitRequest{Domain: "edge"}
	for i := range descriptors {
		d, n := &ratelimitv3.RateLimitDescriptor{}, entries
		if i == wide {
			n++
		}
		for j := range n {
			d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: fmt.Sprintf("k%d", j), Value: fmt.Sprint(i)})
		}
		req.Descriptors = append(req.Descriptors, d)
	}
	return req
}
