package grpclimit_test

import (
	"context"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// docServerOptions are the Options of docs/grpc.md's "## Server" block:
// its per-second quantity and Export's cost read from the block, the rest
// as it writes them.
func docServerOptions(t *testing.T) grpclimit.Options {
	t.Helper()
	doc, err := os.ReadFile("../docs/grpc.md")
	if err != nil {
		t.Fatal(err)
	}
	perSecond := regexp.MustCompile(`Limits: \[\]sluice\.Limit\{sluice\.PerSecond\((\d+)\), sluice\.PerDay\(10_000\)\}`).FindSubmatch(doc)
	export := regexp.MustCompile(`Costs:  map\[string\]int64\{"/search\.v1\.Search/Export": (\d+)\}`).FindSubmatch(doc)
	if perSecond == nil || export == nil {
		t.Fatal("docs/grpc.md's server block does not say PerSecond(N), PerDay(10_000) and Export's cost as this test reads them")
	}
	q, _ := strconv.ParseInt(string(perSecond[1]), 10, 64)
	cost, _ := strconv.ParseInt(string(export[1]), 10, 64)
	return grpclimit.Options{Limits: httplimit.Options{
		Plans: []*httplimit.Plan{{
			Name:   "free",
			Limits: []sluice.Limit{sluice.PerSecond(q), sluice.PerDay(10_000)},
			Costs:  map[string]int64{"/search.v1.Search/Export": cost},
		}},
		Exempt: []string{"/grpc.health.v1.Health/"},
	}}
}

// TestTheGRPCDocsServerStarts: docs/grpc.md's first example, the server
// every reader copies, is accepted by grpclimit.New (it cost Export 20
// under sluice.PerSecond(10), a GCRA of burst 10, which New refuses, so the
// snippet ended in its log.Fatal; TestGoSnippetsCompile only compiles it).
func TestTheGRPCDocsServerStarts(t *testing.T) {
	store := memory.New()
	defer store.Close()
	if _, err := grpclimit.New(sluice.NewLimiter(store), docServerOptions(t)); err != nil {
		t.Fatalf("docs/grpc.md's server does not start: %v", err)
	}
}

// TestTheGRPCDocsRefusalIsTheServers: docs/grpc.md's "A refusal" shows
// the message that server refuses an ordinary call with: a plan with an
// endpoint costing more than 1 counts units (headers.md, "Units"), so it
// says "units per second", not "requests".
func TestTheGRPCDocsRefusalIsTheServers(t *testing.T) {
	doc, err := os.ReadFile("../docs/grpc.md")
	if err != nil {
		t.Fatal(err)
	}
	msg := regexp.MustCompile(`(?m)^message: (Rate limit exceeded: [^.]*\.)`).FindSubmatch(doc)
	if msg == nil {
		t.Fatal("docs/grpc.md: the refusal's message was not found")
	}
	o := docServerOptions(t)
	store := memory.New()
	defer store.Close()
	s, err := grpclimit.New(sluice.NewLimiter(store), o)
	if err != nil {
		t.Fatal(err)
	}
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 5}})
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs())
	ctx = grpc.NewContextWithServerTransportStream(ctx, nopStream{method: "/search.v1.Search/Search"})
	var refusal error
	for i := 0; i < 11 && refusal == nil; i++ {
		refusal = s.Limit(ctx)
	}
	if refusal == nil {
		t.Fatal("11 calls at once were all admitted")
	}
	if got := status.Convert(refusal).Message(); !strings.Contains(got, string(msg[1])) {
		t.Errorf("the server of docs/grpc.md refuses with %q; docs/grpc.md shows %q", got, msg[1])
	}
}
