package server_test

import (
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// The Envoy service bounds the calls of one connection at once, as the
// HTTP listeners' HTTP/2 does: a caller holding the check scope cannot run
// unbounded concurrent calls on the connections.max connections it may
// open. The server says so in its first SETTINGS frame, which gRPC clients
// and Envoy obey.
func TestEnvoyBoundsTheCallsOfAConnection(t *testing.T) {
	srv := startEnvoyWith(t, `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 100}
`, "")
	c, err := net.Dial("tcp", srv.EnvoyAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("reading the server's SETTINGS: %v", err)
		}
		sf, ok := f.(*http2.SettingsFrame)
		if !ok || sf.IsAck() {
			continue
		}
		v, ok := sf.Value(http2.SettingMaxConcurrentStreams)
		if !ok || v != 250 {
			t.Fatalf("SETTINGS_MAX_CONCURRENT_STREAMS %d (sent: %v), want 250", v, ok)
		}
		return
	}
}
