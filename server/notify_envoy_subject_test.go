package server_test

import (
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-dev/sluice/server"
)

// TestNotifyOfEnvoyTellsClientsApartByTheirBytes: Envoy copies a header's
// value into a descriptor, and a header value may hold any byte from 0x80
// (obs-text); the service limits such a descriptor under its exact bytes
// (envoy.Codec), so "bot-\xff\xfe" and "bot-\xff\xfd" are two clients.
// JSON cannot carry those bytes (encoding/json writes U+FFFD for each), so
// the subject writes each as '%' and two hex digits, as it writes '%'
// itself: the two clients' subjects differ, and percent-decoding the
// value gives its bytes back.
func TestNotifyOfEnvoyTellsClientsApartByTheirBytes(t *testing.T) {
	hook := &hookReceiver{}
	hooks := httptest.NewServer(hook)
	defer hooks.Close()
	srv := startEnvoyWith(t, `domain: edge
descriptors:
  - key: header
    rate_limit: {name: per-header, unit: minute, requests_per_unit: 2}
`, "notify:\n  url: "+hooks.URL+"\n  limits: [per-header]\n")
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	values := []string{"bot-\xff\xfe", "bot-\xff\xfd"}
	for _, v := range values {
		for i := range 2 {
			if resp, err := shouldRateLimit(conn, rawRequest("edge", [2]string{"header", v})); err != nil ||
				resp.OverallCode != rlsv3.RateLimitResponse_OK {
				t.Fatalf("%q, request %d: %v %v", v, i, resp.GetOverallCode(), err)
			}
		}
	}
	bodies, _ := hook.waitFor(t, 2)
	for i, v := range values {
		var n server.Notification
		if err := json.Unmarshal([]byte(bodies[i]), &n); err != nil {
			t.Fatal(err)
		}
		value, ok := strings.CutPrefix(n.Subject, "envoy:edge:header=")
		if got, err := url.PathUnescape(value); !ok || err != nil || got != v {
			t.Errorf("client %q told of subject %q, whose value reads %q", v, n.Subject, got)
		}
	}
}
