package memory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/memory"
)

// A new shadow state that finds its shard full of refusing states is not
// kept, so its status reports what an enforcing limit's would: refused for
// want of room, nothing counted, nothing charged. The call stays admitted,
// and what the next call reports is what the store holds.
func TestShadowStateWithoutRoomReportsNothingCounted(t *testing.T) {
	store, lim, _ := newStore(t, memory.WithShards(1), memory.WithMaxKeys(16), memory.WithSweepInterval(0))
	ctx := context.Background()
	full := sluice.FixedWindow(10, time.Minute)
	for i := range 16 { // every state refuses: none may be evicted
		if d, _ := allow(lim, ctx, sluice.Check{Key: fmt.Sprint("k", i), Limit: full, Cost: 10}); !d.Allowed {
			t.Fatalf("k%d refused", i)
		}
	}
	shadow := sluice.FixedWindow(5, time.Minute).Named("trial").WithShadow(true)
	for call := range 3 {
		d, err := allow(lim, ctx, sluice.Check{Key: "new", Limit: shadow, Cost: 1})
		if err != nil {
			t.Fatal(err)
		}
		st := d.Statuses[0]
		if !d.Allowed || st.Allowed || st.Charged != 0 || st.Remaining != 0 || st.RetryAfter <= 0 {
			t.Errorf("call %d: admitted=%v, shadow status %+v; want admitted, shadow refused for want of room, nothing charged", call, d.Allowed, st)
		}
	}
	if st := store.Stats(); st.Keys != 16 || st.NoRoom != 3 || st.Evictions != 0 {
		t.Errorf("stats %+v, want 16 states, 3 checks refused for want of room, nothing evicted", st)
	}
}
