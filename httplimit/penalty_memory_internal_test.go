package httplimit

import (
	"strconv"
	"testing"
	"time"
)

// A full memory of boxes takes no more: the newly boxed client is asked
// about in the store. Once the boxes it holds are past their trust, it
// forgets them and takes new ones.
func TestBoxMemoryIsBounded(t *testing.T) {
	var b boxMemory
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range maxRemembered {
		b.remember(strconv.Itoa(i), t0, t0, time.Hour)
	}
	b.remember("one more", t0, t0, time.Hour)
	if _, live, _ := b.lookup("one more", t0); live {
		t.Error("a full memory took one more box")
	}
	if _, live, _ := b.lookup("0", t0); !live {
		t.Error("a full memory lost a box it held")
	}
	later := t0.Add(boxMaxAge)
	b.remember("one more", later, later, time.Hour)
	if left, live, _ := b.lookup("one more", later); !live || left != time.Hour {
		t.Errorf("a second later: %v %v, want the box held for 1h", left, live)
	}
	if n := b.held.len(); n != 1 {
		t.Errorf("%d boxes held, want 1 (the others are a second old)", n)
	}
}

// A box is trusted until a little before the end the store stated, never
// past it, and for a second at most; its time left is counted from the
// answer.
func TestBoxMemoryNeverOutlivesTheBox(t *testing.T) {
	var b boxMemory
	sent := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	answered := sent.Add(time.Millisecond)
	b.remember("k", sent, answered, 100*time.Millisecond)
	if left, live, _ := b.lookup("k", answered); !live || left != 100*time.Millisecond {
		t.Errorf("at the answer: %v %v, want 100ms left", left, live)
	}
	end := sent.Add(100 * time.Millisecond) // the store decided after sent: its end is no sooner
	if _, live, known := b.lookup("k", end.Add(-time.Microsecond-100*time.Millisecond/1024)); live || !known {
		t.Errorf("within the margin before the earliest end: live %v known %v, want known and not trusted", live, known)
	}
	b.remember("long", sent, sent, time.Hour)
	if _, live, _ := b.lookup("long", sent.Add(boxMaxAge)); live {
		t.Error("a box trusted for more than a second")
	}
	b.remember("short", sent, sent, time.Microsecond)
	if _, live, _ := b.lookup("short", sent); live {
		t.Error("a box of 1µs left is trusted: no margin is left to trust it")
	}
}
