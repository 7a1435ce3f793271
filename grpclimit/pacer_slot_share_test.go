package grpclimit_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-dev/sluice/grpclimit"
)

// A refusal for a concurrency quota may count another client's calls: the
// paced connection holds one slot of two with an open stream, another
// client holds the other for 300 ms, and a paced call meets
// RESOURCE_EXHAUSTED then. Once the other client's slot is back, a call
// goes after the refusal's wait (a probe) and is admitted, though the
// paced stream still holds its slot.
func TestAPacerRefusedForAnotherClientsSlotProbesAfterItsWait(t *testing.T) {
	addr := concurrencyServer(t, 2)
	conn := dialPaced(t, addr, &grpclimit.Pacer{MaxWait: 3 * time.Second})
	other, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	if _, err := say(context.Background(), conn, methodSay); err != nil { // the probe: learns the quota
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	defer scancel()
	openHeldStream(t, sctx, conn) // the paced connection's own stream, open for long

	octx, ocancel := context.WithCancel(context.Background())
	openHeldStream(t, octx, other) // another client takes the second slot
	if _, err := say(context.Background(), conn, methodSay); status.Code(err) != codes.ResourceExhausted {
		ocancel()
		t.Fatalf("a call while both slots were held: %v; want RESOURCE_EXHAUSTED from the server", err)
	}
	time.Sleep(300 * time.Millisecond)
	ocancel() // the other client's slot is back
	time.Sleep(100 * time.Millisecond)

	start := time.Now()
	_, err = say(context.Background(), conn, methodSay)
	elapsed := time.Since(start)
	if err != nil {
		t.Errorf("a call once the other client's slot was back (the paced stream still open): after %v, %v; want it sent after the refusal's wait (1 s) and admitted", elapsed.Round(time.Millisecond), err)
	}
}
