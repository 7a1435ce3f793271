package server_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/memory"
	"github.com/sluice-dev/sluice/server"
)

// wireBytes is a request already encoded, sent as it is by rawCodec.
type wireBytes []byte

// rawCodec sends wireBytes unchanged (so a test can send what no protobuf
// library would produce) and everything else as protobuf.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }
func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.(wireBytes); ok {
		return b, nil
	}
	return proto.Marshal(v.(proto.Message))
}
func (rawCodec) Unmarshal(data []byte, v any) error { return proto.Unmarshal(data, v.(proto.Message)) }

// envoyServer serves the Envoy service on loopback with rules for
// remote_address (3 per minute) and returns a connection to it.
func envoyServer(t *testing.T) *grpc.ClientConn {
	t.Helper()
	srv := startEnvoy(t, `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {name: per-ip, unit: minute, requests_per_unit: 3}
  - key: header
    rate_limit: {name: per-header, unit: minute, requests_per_unit: 3}
`)
	conn, err := grpc.NewClient(srv.EnvoyAddr(), grpc.WithTransportCredentials(insecure.NewCredentials()), withToken(testToken),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// startEnvoy serves testConfig with an envoy section of rules (the fixture
// caller, testToken, holds every scope) on loopback until the test ends.
func startEnvoy(t *testing.T, rules string) *server.Server {
	t.Helper()
	return startEnvoyWith(t, rules, "")
}

// startEnvoyWith is startEnvoy with more sections of configuration.
func startEnvoyWith(t *testing.T, rules, more string) *server.Server {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte(rules), 0o644)
	cfgFile := filepath.Join(dir, "sluice.yaml")
	os.WriteFile(cfgFile, []byte("envoy:\n  listen: 127.0.0.1:0\n  rules: [rules.yaml]\n"+testConfig+testAdmin+more), 0o644)
	cfg, err := config.Load(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	// The store's clock stands still at noon: Envoy's rules are windows
	// aligned to the clock, and on the wall clock one that ended between two
	// of a test's calls gave its quantity again.
	still := memory.New(memory.WithClock(func() time.Time { return noon }), memory.WithSweepInterval(0))
	srv, err := server.New(server.Options{Config: cfg, Store: still,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, srv)
	waitEnvoy(t, srv)
	return srv
}

func entry(k, v string) *ratelimitv3.RateLimitDescriptor_Entry {
	return &ratelimitv3.RateLimitDescriptor_Entry{Key: k, Value: v}
}

func descriptor(entries ...*ratelimitv3.RateLimitDescriptor_Entry) *ratelimitv3.RateLimitDescriptor {
	return &ratelimitv3.RateLimitDescriptor{Entries: entries}
}

// shouldRateLimit sends req (a *RateLimitRequest or wireBytes).
func shouldRateLimit(conn *grpc.ClientConn, req any) (*rlsv3.RateLimitResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := new(rlsv3.RateLimitResponse)
	err := conn.Invoke(ctx, "/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit", req, resp)
	return resp, err
}

// Malformed requests to the Envoy service — descriptors that break its
// rules, and bytes that are not a RateLimitRequest — are answered with
// INVALID_ARGUMENT and a message; the service keeps deciding afterwards.
func TestEnvoyMalformedRequestsAreInvalidArgument(t *testing.T) {
	conn := envoyServer(t)
	many := make([]*ratelimitv3.RateLimitDescriptor, 65)
	for i := range many {
		many[i] = descriptor(entry("remote_address", "10.0.0.1"))
	}
	wide := descriptor()
	for range 33 {
		wide.Entries = append(wide.Entries, entry("k", "v"))
	}
	hits := descriptor(entry("remote_address", "10.0.0.1"))
	hits.HitsAddend = wrapperspb.UInt64(math.MaxUint64)
	override := descriptor(entry("remote_address", "10.0.0.1"))
	override.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit(99)}
	longWindow := descriptor(entry("remote_address", "10.0.0.1"))
	longWindow.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit_YEAR,
		UnitMultiplier: wrapperspb.UInt32(math.MaxUint32)}
	valid, _ := proto.Marshal(&rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor(entry("remote_address", "10.0.0.1"))}})

	cases := map[string]any{
		"no domain":                &rlsv3.RateLimitRequest{Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor(entry("k", "v"))}},
		"no descriptors":           &rlsv3.RateLimitRequest{Domain: "edge"},
		"a descriptor of nothing":  &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor()}},
		"65 descriptors":           &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: many},
		"33 entries":               &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{wide}},
		"an empty key":             &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{descriptor(entry("", "v"))}},
		"hits above int64":         &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{hits}},
		"an override in no unit":   &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{override}},
		"an override of 4e9 years": &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{longWindow}},
		"truncated bytes":          wireBytes(valid[:len(valid)-3]),
		"a varint that never ends": wireBytes{0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"a string of wrong type":   wireBytes(protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 7)),
		"a length past the end":    wireBytes{0x12, 0x7f, 0x0a},
		"field number 0":           wireBytes{0x02, 0x00},
		"garbage":                  wireBytes("\xde\xad\xbe\xef not a protobuf"),
	}
	for name, req := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := shouldRateLimit(conn, req)
			st, _ := grpcstatus.FromError(err)
			if st.Code() != codes.InvalidArgument || st.Message() == "" {
				t.Errorf("answer %v, want InvalidArgument with a message", err)
			}
		})
	}
	resp, err := shouldRateLimit(conn, wireBytes(valid))
	if err != nil || resp.OverallCode != rlsv3.RateLimitResponse_OK {
		t.Fatalf("a valid request after the malformed ones: %v %v", resp, err)
	}
}

// appendEntry encodes a descriptor entry whose key and value are raw
// bytes, valid UTF-8 or not.
func rawRequest(domain string, entries ...[2]string) wireBytes {
	var d []byte
	for _, e := range entries {
		var en []byte
		en = protowire.AppendTag(en, 1, protowire.BytesType)
		en = protowire.AppendString(en, e[0])
		en = protowire.AppendTag(en, 2, protowire.BytesType)
		en = protowire.AppendString(en, e[1])
		d = protowire.AppendTag(d, 1, protowire.BytesType)
		d = protowire.AppendBytes(d, en)
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, domain)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendBytes(b, d)
	return b
}

// Envoy copies request header values into descriptors, and a header value
// may hold any byte from 0x80 to 0xff (obs-text). Envoy's protobuf library
// sends such a value as it is, although a proto3 string should be UTF-8.
// A client that puts such bytes into the header a rule limits must be
// limited like any other: not slip through as an error, which Envoy's
// failure_mode_deny: false (its default) turns into "allowed".
func TestEnvoyDescriptorsThatAreNotUTF8AreLimited(t *testing.T) {
	conn := envoyServer(t)
	req := rawRequest("edge", [2]string{"header", "bot-\xff\xfe"})
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK,
		rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		resp, err := shouldRateLimit(conn, req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if resp.OverallCode != want {
			t.Fatalf("request %d: %v, want %v", i, resp.OverallCode, want)
		}
	}
	// Another invalid value is another client.
	if resp, err := shouldRateLimit(conn, rawRequest("edge", [2]string{"header", "bot-\xff\xfd"})); err != nil ||
		resp.OverallCode != rlsv3.RateLimitResponse_OK {
		t.Fatalf("another value: %v %v", resp, err)
	}
}
