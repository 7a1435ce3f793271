package grpclimit_test

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/grpclimit"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// gRPC full methods are case-sensitive (grpc-go routes /svc.echo/heavy
// nowhere): a call of the free method /sluice.test.Echo/Heavy costs 0
// beside a cost for every other method ("/{service}/{method}": 2 or "/":
// 2). Its path in lower case is read against the patterns in lower case,
// where Heavy's is the more specific, not against the general pattern as
// written.
func TestAFreeMethodIsFreeBesideACostForEveryOtherMethod(t *testing.T) {
	for _, general := range []string{"/{service}/{method}", "/"} {
		store := memory.New()
		p := plan("free", sluice.PerMinute(2))
		p.Costs = map[string]int64{methodHeavy: 0, general: 2}
		s, err := grpclimit.New(sluice.NewLimiter(store), grpclimit.Options{Limits: httplimit.Options{Plans: []*httplimit.Plan{p}}})
		if err != nil {
			t.Fatal(err)
		}
		heavy := grpc.NewContextWithServerTransportStream(context.Background(), nopStream{method: methodHeavy})
		for i := range 3 {
			if err := s.Limit(heavy); err != nil {
				t.Errorf("costs {%s: 0, %s: 2}, 2 per minute: free call %d of %s refused: %v", methodHeavy, general, i+1, methodHeavy, status.Code(err))
				break
			}
		}
		say := grpc.NewContextWithServerTransportStream(context.Background(), nopStream{method: methodSay})
		if err := s.Limit(say); status.Code(err) != codes.OK {
			t.Errorf("costs {%s: 0, %s: 2}: %s after three free calls: %v, want admitted (the free calls spent the quota)", methodHeavy, general, methodSay, status.Code(err))
		}
		store.Close()
	}
}
