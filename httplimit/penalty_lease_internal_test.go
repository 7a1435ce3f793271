package httplimit

import (
	"strconv"
	"testing"
	"time"
)

// A client found not in the box goes without the guard for a second from
// when that call was sent, not a microsecond more; forgotten, it carries
// the guard at once.
func TestClearMemoryLastsASecondFromTheCall(t *testing.T) {
	var c clearMemory
	sent := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if c.cleared("k", sent) {
		t.Fatal("the zero memory clears a client")
	}
	c.remember("k", sent)
	if !c.cleared("k", sent.Add(boxMaxAge-time.Microsecond)) {
		t.Error("not cleared 1µs before a second from the call")
	}
	if c.cleared("k", sent.Add(boxMaxAge)) {
		t.Error("cleared a second after the call")
	}
	c.remember("k", sent.Add(-time.Millisecond)) // an earlier call's answer, late
	if !c.cleared("k", sent.Add(boxMaxAge-time.Microsecond)) {
		t.Error("an earlier call's answer shortened the memory of a later one")
	}
	c.forget("k")
	if c.cleared("k", sent) {
		t.Error("cleared after forget")
	}
}

// A full memory of clients found not in the box takes no more: the new
// client's calls carry the guard. Once those it holds are a second old,
// it forgets them and takes new ones.
func TestClearMemoryIsBounded(t *testing.T) {
	var c clearMemory
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for i := range maxRemembered {
		c.remember(strconv.Itoa(i), t0)
	}
	c.remember("one more", t0)
	if c.cleared("one more", t0) {
		t.Error("a full memory took one more client")
	}
	if !c.cleared("0", t0) {
		t.Error("a full memory lost a client it held")
	}
	later := t0.Add(boxMaxAge)
	c.remember("one more", later)
	if !c.cleared("one more", later) {
		t.Error("a second later, the new client is not remembered")
	}
	if n := c.until.len(); n != 1 {
		t.Errorf("%d clients remembered, want 1 (the others are a second old)", n)
	}
}
