package httplimit

import (
	"strings"
	"testing"
)

// headerValues must give back exactly the values buf holds, for any number
// and size of values (past a block's size too), each full to capacity so
// that appending to one never writes into the next, and values handed out
// earlier must never change while later ones are cut from the same blocks.
func TestHeaderValuesSplitTheBufferAndNeverChangeLater(t *testing.T) {
	var res Result
	type handed struct{ got, want []string }
	var all []handed
	for round := range 3 {
		for _, k := range []int{1, 2, 3, 8, 70} {
			for _, n := range []int{k, 24, 90, 240, valueBlockBytes - 1, valueBlockBytes, valueBlockBytes + 1, 3000} {
				if n < k {
					continue
				}
				var buf []byte
				var ends []int
				var want []string
				for i := range k {
					size := n / k
					if i == k-1 {
						size = n - len(buf)
					}
					v := strings.Repeat(string(rune('a'+(i+round)%26)), size)
					buf = append(buf, v...)
					ends = append(ends, len(buf))
					want = append(want, v)
				}
				got := res.headerValues(buf, ends)
				clear(buf) // the values must not share the caller's buffer
				if len(got) != k || cap(got) != k {
					t.Fatalf("k=%d n=%d: %d values (cap %d)", k, n, len(got), cap(got))
				}
				for i := 0; i+1 < k; i++ { // as http.Header.Add appends to one value
					_ = append(got[i:i+1:i+1], "x")
				}
				all = append(all, handed{got, want})
			}
		}
	}
	for _, h := range all {
		for i := range h.got {
			if h.got[i] != h.want[i] {
				t.Fatalf("value %d of %d = %.20q…, want %.20q…", i, len(h.got), h.got[i], h.want[i])
			}
		}
	}
}

func TestHeaderValuesKeepEmptyValuesEmpty(t *testing.T) {
	var res Result
	res.headerValues([]byte("xyz"), []int{3})
	got := res.headerValues([]byte("ab"), []int{0, 2, 2})
	if len(got) != 3 || got[0] != "" || got[1] != "ab" || got[2] != "" {
		t.Errorf("headerValues = %q, want [\"\" \"ab\" \"\"]", got)
	}
}
