package grpclimit_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/client"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// serve starts a gRPC server with the health service, limited by limits,
// and returns its address and the function that stops it.
func serve(limits *grpclimit.Server) (addr string, stop func()) {
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(limits.UnaryInterceptor()),
		grpc.ChainStreamInterceptor(limits.StreamInterceptor()))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go srv.Serve(lis)
	return lis.Addr().String(), srv.Stop
}

// A server allows each API key 2 calls a minute; the third call is refused
// with the details any gRPC client can read.
func Example() {
	store := memory.New()
	defer store.Close()
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2)}}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	addr, stop := serve(limits)
	defer stop()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", "k-123")
	for range 3 {
		var trailer metadata.MD
		_, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.Trailer(&trailer))
		fmt.Println(status.Code(err), trailer.Get("ratelimit"))
		for _, d := range status.Convert(err).Details() {
			switch d := d.(type) {
			case *errdetails.RetryInfo:
				fmt.Println("retry in", d.GetRetryDelay().AsDuration().Round(time.Second))
			case *errdetails.QuotaFailure:
				fmt.Println("exceeded:", d.Violations[0].Description)
			}
		}
	}
	// Output:
	// OK ["per-minute";r=1;t=30]
	// OK ["per-minute";r=0;t=30]
	// ResourceExhausted ["per-minute";r=0;t=30]
	// retry in 30s
	// exceeded: per-minute: 2 per 1m on the free plan
}

// A client of a server allowing 20 calls a second (burst 5) paces 40
// calls from 8 goroutines: none is refused. The Retry would retry a
// refused call after its RetryInfo delay.
func ExamplePacer() {
	store := memory.New()
	defer store.Close()
	refused := 0
	var mu sync.Mutex
	limits, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "free", Limits: []sluice.Limit{sluice.GCRA(20, time.Second).WithBurst(5)}}},
		Observer: func(res *httplimit.Result, _ time.Duration, err error) {
			mu.Lock()
			defer mu.Unlock()
			if err == nil && !res.Decision.Allowed {
				refused++
			}
		},
	}})
	if err != nil {
		log.Fatal(err)
	}
	addr, stop := serve(limits)
	defer stop()

	pacer, retry := &grpclimit.Pacer{}, grpclimit.NewRetry(client.RetryPolicy{})
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithChainUnaryInterceptor(retry.UnaryInterceptor(), pacer.UnaryInterceptor()),
		grpc.WithChainStreamInterceptor(pacer.StreamInterceptor()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	health := healthpb.NewHealthClient(conn)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 40; i += 8 {
				if _, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{}); err != nil {
					log.Fatal(err)
				}
			}
		})
	}
	wg.Wait()
	fmt.Println("refused by the server:", refused)
	// Output: refused by the server: 0
}
