package client

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// eightPolicies is an admitted answer at at stating 8 policies of
// requests, each with its q and w, and what remains of each.
func eightPolicies(at time.Time) response {
	var stated, named []string
	for i := range maxPolicies {
		stated = append(stated, fmt.Sprintf(`"p%d";q=%d;w=%d`, i, 10+i, 1<<i))
		named = append(named, fmt.Sprintf(`"p%d";r=%d;t=%d`, i, 5+i, 1<<i))
	}
	hdr := http.Header{}
	hdr.Set("RateLimit-Policy", strings.Join(stated, ", "))
	hdr.Set("RateLimit", strings.Join(named, ", "))
	r := readResponse(hdr, at)
	r.status = http.StatusOK
	return r
}

// What a host remembers of the policies its answers state is bounded: a
// host's state whose answers state 8 policies of q units per w (the most
// it remembers) takes at most 17 KiB, so that the 1,024 hosts a Transport
// remembers, each with a state of requests and one of content bytes,
// take at most 34 MiB however many policies their servers state. Before,
// each window kept the index of each of its slots beside its count: 24
// KiB.
func TestAHostRemembersEightPoliciesIn17KiB(t *testing.T) {
	const hosts = 1024
	states := make([]*hostState, hosts)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range states {
		h := newHostState(true, 0)
		for j := range 3 {
			at := t0.Add(time.Duration(j) * time.Second)
			tk, ok, _ := h.try(1, at)
			if !ok {
				t.Fatalf("host %d, request %d not granted", i, j)
			}
			h.finish(tk, eightPolicies(at.Add(10*time.Millisecond)))
		}
		states[i] = h
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := int64(after.HeapAlloc-before.HeapAlloc) / hosts
	t.Logf("a host of 8 policies of q and w: %d bytes", per)
	if len(states[0].policies) != maxPolicies {
		t.Fatalf("%d policies remembered, want %d", len(states[0].policies), maxPolicies)
	}
	if per > 17<<10 {
		t.Errorf("a host of 8 policies of q and w takes %d bytes; want at most 17 KiB", per)
	}
	runtime.KeepAlive(states)
}
