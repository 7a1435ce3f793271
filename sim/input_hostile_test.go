package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

// FuzzReadCSV: any text either fails with a *LineError naming a line, or
// reads as a trace whose arrivals are sorted, inside [Start, End), with
// known keys of 1 to MaxKeyLen bytes, costs ≥ 0 and no more than the bound.
func FuzzReadCSV(f *testing.F) {
	f.Add("time,key,cost\n0,a,1\n0.5,b\n1.25,\"a,b\",3\n", true)
	f.Add("2026-03-01T12:00:00.250Z,k,1\n2026-03-01T12:00:00Z,k,0\n", false)
	f.Add("# comment\n\n-1,k,1\n1e400,k,-3\n9999999999999999,k,1\n", true)
	f.Add("0,\"unterminated,1\n0,,1\n", true)
	f.Fuzz(func(t *testing.T, text string, skipBad bool) {
		const bound = 1000
		tr, skipped, err := ReadCSV(strings.NewReader(text), CSVOptions{SkipBad: skipBad, MaxArrivals: bound})
		for _, le := range skipped {
			if le.Line < 1 || le.Reason == "" {
				t.Fatalf("skipped line without a place or a reason: %+v", le)
			}
		}
		if err != nil {
			if tr != nil {
				t.Fatal("a trace and an error")
			}
			var le *LineError
			if errors.As(err, &le) && le.Line < 1 {
				t.Fatalf("line error without a line: %v", err)
			}
			return
		}
		if len(tr.Arrivals) == 0 || len(tr.Arrivals) > bound {
			t.Fatalf("%d arrivals, bound %d", len(tr.Arrivals), bound)
		}
		for i, a := range tr.Arrivals {
			if a.At < tr.Start || a.At >= tr.End || i > 0 && a.At < tr.Arrivals[i-1].At {
				t.Fatalf("arrival %d at %d outside [%d, %d) or out of order", i, a.At, tr.Start, tr.End)
			}
			if a.Cost < 0 || a.Key < 0 || int(a.Key) >= len(tr.Keys) {
				t.Fatalf("arrival %+v with %d keys", a, len(tr.Keys))
			}
		}
		for _, k := range tr.Keys {
			if k == "" || len(k) > sluice.MaxKeyLen {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
	})
}

// FuzzSimulateRequest is the designer's input (POST /designer/run sends a
// Request as JSON): any body either fails to decode, or is refused by
// Simulate with an error, or simulates within the traffic bound — never a
// panic, never past its deadline by more than a moment.
func FuzzSimulateRequest(f *testing.F) {
	f.Add(`{"limit":"100/1m","pattern":{"name":"boundary-burst"},"algorithms":["gcra","fixed-window"]}`)
	f.Add(`{"limit":"5/1s","burst":10,"trace":"0,a,1\n0.1,a,20\n","retry":{"max":3,"impatient":0.5,"gap":"1s"}}`)
	f.Add(`{"limit":"1/1ns","reference":"9223372036854775807/1h","max_wait":"-1s"}`)
	f.Add(`{"limit":"100/1m","pattern":{"name":"spike","rate":1e300,"keys":-1,"duration":"1000000h"}}`)
	for _, seed := range []string{`{"limit":"100/1m","pattern":{"name":"boundary-burst"}}`,
		`{"limit":"5/1s","burst":10,"trace":"0,a,1\n0.1,a,20\n","retry":{"max":3,"impatient":0.5,"gap":"1s"}}`} {
		var req Request
		if err := json.Unmarshal([]byte(seed), &req); err != nil {
			f.Fatalf("seed %s: %v", seed, err)
		}
		req.MaxArrivals = 2000
		if _, err := Simulate(context.Background(), req); err != nil {
			f.Fatalf("seed %s does not simulate: %v", seed, err)
		}
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req Request
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		if dec.Decode(&req) != nil {
			return
		}
		req.Chart, req.TraceReader, req.MaxArrivals = "", nil, 2000
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		resp, err := Simulate(ctx, req)
		if took := time.Since(start); took > 4*time.Second {
			t.Fatalf("simulation took %v with a 2 s deadline", took)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		if resp == nil {
			t.Fatal("no response and no error")
		}
	})
}

// paddedLines is a trace of n lines, each a request of a key of its own
// padded with pad spaces around the key, generated as it is read.
type paddedLines struct {
	n, pad, line int
	buf          []byte
}

func (p *paddedLines) Read(b []byte) (int, error) {
	for len(p.buf) == 0 {
		if p.line == p.n {
			return 0, io.EOF
		}
		p.buf = fmt.Appendf(nil, "%d,%s k%d ,1\n", p.line, strings.Repeat(" ", p.pad), p.line)
		p.line++
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	return n, nil
}

// A trace keeps each key's bytes, not the line it was read from: lines
// padded to 64 KiB (25 MiB of them) leave a trace of a few KiB of keys.
func TestReadCSVKeepsKeysNotTheirLines(t *testing.T) {
	const lines, pad = 400, 64 << 10
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tr, _, err := ReadCSV(&paddedLines{n: lines, pad: pad}, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(tr.Keys) != lines || tr.Keys[1] != "k1" {
		t.Fatalf("%d keys, %q", len(tr.Keys), tr.Keys[:2])
	}
	if kept := int64(after.HeapAlloc) - int64(before.HeapAlloc); kept > 8<<20 {
		t.Errorf("the trace of %d keys keeps %d MiB: the lines they were read from", lines, kept>>20)
	}
	runtime.KeepAlive(tr)
}
