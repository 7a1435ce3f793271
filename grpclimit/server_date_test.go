package grpclimit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// A Server dates the RateLimit fields it sends, as an HTTP response is
// dated: a "date" entry, the decision's time (Limits.Clock's) as an
// HTTP-date, in an admitted unary call's trailers, an admitted stream's
// header and trailers, and a refusal's trailers.
func TestAServerDatesItsRateLimitFields(t *testing.T) {
	t.Parallel()
	want := stillAt.Format(http.TimeFormat)
	ts := startStill(t, grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{plan("free", sluice.FixedWindow(2, time.Minute))},
		Clock: func() time.Time { return stillAt },
	}})
	dated := func(what string, md metadata.MD) {
		t.Helper()
		if got := md.Get("date"); len(got) != 1 || got[0] != want {
			t.Errorf("%s: date %q; want %q", what, got, want)
		}
	}
	tr, err := say(context.Background(), ts.conn, methodSay)
	if err != nil {
		t.Fatal(err)
	}
	dated("an admitted call's trailers", tr)
	cs, err := ts.conn.NewStream(context.Background(), &countStream, methodCount)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("n")); err != nil {
		t.Fatal(err)
	}
	if err := cs.CloseSend(); err != nil {
		t.Fatal(err)
	}
	h, err := cs.Header()
	if err != nil {
		t.Fatal(err)
	}
	dated("an admitted stream's header", h)
	for cs.RecvMsg(new(wrapperspb.StringValue)) == nil {
	}
	dated("an admitted stream's trailers", cs.Trailer())
	tr, err = say(context.Background(), ts.conn, methodSay)
	if err == nil {
		t.Fatal("a third call within a quota of 2 was admitted")
	}
	dated("a refusal's trailers", tr)
}

// A Server in the legacy header mode sends X-RateLimit-Reset as a Unix
// time of its own clock. A Pacer takes it relative to the answer's date,
// as client.Transport takes it relative to an HTTP response's Date, so
// that the clocks' skew does not matter: with the server's clock 10
// minutes ahead of the client's, a quota of 2 a second, spent, is back
// within a second for the Pacer too. Read against the client's clock, the
// reset would be 10 minutes away, and every call would fail at once,
// beyond MaxWait.
func TestALegacyResetIsReadAgainstTheServersDate(t *testing.T) {
	t.Parallel()
	serverClock := func() time.Time { return time.Now().Add(10 * time.Minute) } // the server host's clock
	store := memory.New(memory.WithClock(serverClock), memory.WithClockResolution(0))
	pacer := &grpclimit.Pacer{MaxWait: 5 * time.Second}
	ts := startOn(t, store, grpclimit.Options{Limits: httplimit.Options{
		Plans:   []*httplimit.Plan{plan("free", sluice.FixedWindow(2, time.Second))},
		Headers: []string{httplimit.ModeLegacy},
		Clock:   serverClock,
	}}, grpc.WithChainUnaryInterceptor(pacer.UnaryInterceptor()))
	for i := range 2 {
		if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	time.Sleep(1500 * time.Millisecond) // the server's second-long window is over
	start := time.Now()
	if _, err := say(context.Background(), ts.conn, methodSay); err != nil {
		t.Errorf("a call 1.5 s after a window of 1 s was spent: %v (%v, after %v); want it sent and admitted within a second or so",
			err, status.Code(err), time.Since(start).Round(time.Millisecond))
	}
}
