package sim

import (
	"encoding/json"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in string
		q  int64
		w  time.Duration
	}{
		{"100/1m", 100, time.Minute},
		{"10/s", 10, time.Second},
		{"5/500ms", 5, 500 * time.Millisecond},
		{"1000/day", 1000, 24 * time.Hour},
		{"50000/7d", 50000, 7 * 24 * time.Hour},
		{" 3 / minute ", 3, time.Minute},
		{"7/1h30m", 7, 90 * time.Minute},
	} {
		q, w, err := ParseRate(tc.in)
		if err != nil || q != tc.q || w != tc.w {
			t.Errorf("ParseRate(%q) = %d, %v, %v; want %d, %v", tc.in, q, w, err, tc.q, tc.w)
		}
		if back := FormatRate(q, w); back != "" {
			if q2, w2, err := ParseRate(back); err != nil || q2 != q || w2 != w {
				t.Errorf("FormatRate(%d, %v) = %q does not read back", q, w, back)
			}
		}
	}
	for _, bad := range []string{"", "100", "0/1m", "-1/1m", "x/1m", "100/", "100/0s", "100/-1m", "100/1ns", "100/fortnight"} {
		if _, _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted a bad rate", bad)
		}
	}
}

func TestFormatDurationIsShortAndExact(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", time.Hour: "1h", 24 * time.Hour: "24h", 90 * time.Second: "1m30s",
		1500 * time.Millisecond: "1.5s", 2*time.Hour + time.Second: "2h0m1s",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("FormatDuration(%v) does not read back: %v %v", d, back, err)
		}
	}
}

func TestDurationJSONReadsStringsAndSeconds(t *testing.T) {
	var v struct{ A, B, C Duration }
	if err := json.Unmarshal([]byte(`{"A":"1m","B":1.5,"C":"2d"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.A.D() != time.Minute || v.B.D() != 1500*time.Millisecond || v.C.D() != 48*time.Hour {
		t.Fatalf("got %v %v %v", v.A, v.B, v.C)
	}
	out, _ := json.Marshal(v)
	if string(out) != `{"A":"1m","B":"1.5s","C":"48h"}` {
		t.Fatalf("marshalled %s", out)
	}
	if err := json.Unmarshal([]byte(`{"A":"soon"}`), &v); err == nil {
		t.Fatal("a bad duration was accepted")
	}
}
