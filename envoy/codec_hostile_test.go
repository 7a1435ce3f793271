package envoy_test

import (
	"context"
	"slices"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// FuzzCodec feeds arbitrary bytes to the service as its gRPC server reads
// them (envoy.Codec): reading never fails; what protobuf reads, the codec
// reads the same; and the service answers a decision or InvalidArgument
// with a message — never another error, never a panic.
func FuzzCodec(f *testing.F) {
	rules, err := envoy.LoadRules("fuzz.yaml", []byte(fuzzRules))
	if err != nil {
		f.Fatal(err)
	}
	clock := &fakeClock{}
	clock.us.Store(sluice.MicrosSinceEpoch(start))
	store := memory.New(memory.WithClock(clock.Now), memory.WithSweepInterval(0), memory.WithMaxKeys(1<<14))
	defer store.Close()
	svc, err := envoy.NewService(sluice.NewLimiter(store), rules, envoy.Options{Headers: httplimit.ModeIETF})
	if err != nil {
		f.Fatal(err)
	}
	for _, req := range []*rlsv3.RateLimitRequest{
		request("edge", 0, desc("remote_address", "1.2.3.4"), desc("remote_address", "1.2.3.4", "path", "/login")),
		request("edge", 7, desc("tenant", "t"), withHits(desc("bucket", "b"), 0)),
	} {
		f.Add(must(proto.Marshal(req)))
	}
	f.Add([]byte("\x0a\x04edge\x12\x0c\x0a\x0a\x0a\x01k\x12\x05\xff\xfe\x80ab")) // a value that is not UTF-8
	f.Add([]byte("\xde\xad\xbe\xef"))
	codec := envoy.Codec()
	// reused is read into again and again, as the service's pooled
	// requests are: what an earlier input left in it must not show.
	var reused rlsv3.RateLimitRequest
	f.Fuzz(func(t *testing.T, data []byte) {
		var req rlsv3.RateLimitRequest
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data)}, &req); err != nil {
			t.Fatalf("the codec refused to read: %v", err)
		}
		var want rlsv3.RateLimitRequest
		beyond := false // the bounds the codec refuses to read beyond
		if proto.Unmarshal(data, &want) == nil {
			beyond = len(want.Descriptors) > envoy.MaxDescriptors ||
				slices.ContainsFunc(want.Descriptors, func(d *ratelimitv3.RateLimitDescriptor) bool { return len(d.Entries) > envoy.MaxEntries })
			if !beyond && !proto.Equal(&req, &want) {
				t.Fatalf("the codec read %v, protobuf %v", &req, &want)
			}
		}
		// In two parts, as a message can arrive in gRPC's buffers.
		half := len(data) / 2
		if err := codec.Unmarshal(mem.BufferSlice{mem.SliceBuffer(data[:half]), mem.SliceBuffer(data[half:])}, &reused); err != nil {
			t.Fatalf("the codec refused to read into a used request: %v", err)
		}
		if !proto.Equal(&req, &reused) {
			t.Fatalf("the codec read %v into a used request, %v into a new one", &reused, &req)
		}
		clock.Advance(1000)
		resp, err := svc.ShouldRateLimit(context.Background(), &req)
		if err != nil {
			if st, _ := grpcstatus.FromError(err); st.Code() != codes.InvalidArgument || st.Message() == "" {
				t.Fatalf("error %v, want InvalidArgument with a message", err)
			}
			return
		}
		if beyond {
			t.Fatalf("a request beyond the bounds was answered %v", resp)
		}
		if len(resp.Statuses) != len(req.Descriptors) {
			t.Fatalf("%d statuses for %d descriptors", len(resp.Statuses), len(req.Descriptors))
		}
		sent, err := codec.Marshal(resp)
		if err != nil {
			t.Fatalf("the response cannot be sent: %v", err)
		}
		var got rlsv3.RateLimitResponse
		if err := proto.Unmarshal(sent.Materialize(), &got); err != nil || !proto.Equal(&got, resp) {
			t.Fatalf("the codec sent %v (%v), want %v", &got, err, resp)
		}
	})
}
