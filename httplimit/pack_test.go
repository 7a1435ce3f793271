package httplimit

import (
	"strings"
	"testing"
)

// packValues must give back exactly the values buf holds, for every block
// shape and past the largest one, each full to capacity so that appending
// to one never writes into the next.
func TestPackValuesSplitsTheBufferIntoFullCapacityValues(t *testing.T) {
	for _, k := range []int{1, 2, 3, 4, 5, 8} {
		for _, n := range []int{k, 47, 48, 49, 64, 65, 112, 113, 128, 129, 192, 193, 240, 241, 511} {
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
				v := strings.Repeat(string(rune('a'+i)), size)
				buf = append(buf, v...)
				ends = append(ends, len(buf))
				want = append(want, v)
			}
			got := packValues(buf, ends)
			if len(got) != k {
				t.Fatalf("k=%d n=%d: %d values", k, n, len(got))
			}
			clear(buf) // the values must not share the caller's buffer
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("k=%d n=%d: value %d = %q, want %q", k, n, i, got[i], want[i])
				}
			}
			for i := 0; i+1 < k; i++ { // as http.Header.Add appends to one value
				_ = append(got[i:i+1:i+1], "x")
				if got[i+1] != want[i+1] {
					t.Errorf("k=%d n=%d: appending to value %d overwrote value %d", k, n, i, i+1)
				}
			}
		}
	}
}

func TestPackValuesKeepsEmptyValuesEmpty(t *testing.T) {
	got := packValues([]byte("ab"), []int{0, 2, 2})
	if len(got) != 3 || got[0] != "" || got[1] != "ab" || got[2] != "" {
		t.Errorf("packValues = %q, want [\"\" \"ab\" \"\"]", got)
	}
}
