package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
)

func TestReadCSVSecondsOffsets(t *testing.T) {
	in := "time,key,cost\n# a comment\n\n0.5,alice,2\n0,bob\n1.25,\"a,b\",0\n"
	tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{Name: "t.csv"})
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if tr.Source != "trace t.csv" || len(tr.Keys) != 3 || len(tr.Arrivals) != 3 {
		t.Fatalf("trace %+v", tr)
	}
	want := []Arrival{{At: 0, Key: 1, Cost: 1}, {At: 500_000, Key: 0, Cost: 2}, {At: 1_250_000, Key: 2, Cost: 0}}
	for i, a := range tr.Arrivals {
		if a != want[i] {
			t.Errorf("arrival %d = %+v, want %+v (sorted by time)", i, a, want[i])
		}
	}
	if tr.Keys[2] != "a,b" || tr.Start != 0 || tr.End != 2_000_000 {
		t.Errorf("keys %q, span [%d, %d)", tr.Keys, tr.Start, tr.End)
	}
}

func TestReadCSVRFC3339(t *testing.T) {
	in := "2026-03-01T12:00:01.5Z,k,1\n2026-03-01T13:00:00+01:00,k,1\n"
	tr, _, err := ReadCSV(strings.NewReader(in), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := sluice.MicrosSinceEpoch(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	if tr.Arrivals[0].At != t0 || tr.Arrivals[1].At != t0+1_500_000 || tr.Start != t0 {
		t.Fatalf("arrivals %+v, start %d; want %d and %d", tr.Arrivals, tr.Start, t0, t0+1_500_000)
	}
}

func TestReadCSVErrorsNameTheirLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		reason   string
	}{
		{"a bad time", "1,a,1\nyesterday,a,1\n", 2, "neither RFC 3339"},
		{"a negative cost", "time,key,cost\n1,a,1\n2,a,-3\n", 3, "cost"},
		{"too many fields", "1,a,1,extra\n", 1, "4 fields"},
		{"an empty key", "1,a\n\n# c\n2,,1\n", 4, "key"},
		{"mixed time forms", "1,a\n2026-03-01T12:00:00Z,a\n", 2, "one form"},
		{"a late header", "1,a\ntime,key,cost\n", 2, "header"},
		{"bad quoting", "1,\"a,1\n", 1, "quoting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := ReadCSV(strings.NewReader(tc.in), CSVOptions{})
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("error %v is not a *LineError", err)
			}
			if le.Line != tc.line || !strings.Contains(le.Reason, tc.reason) {
				t.Fatalf("got %v; want line %d mentioning %q", le, tc.line, tc.reason)
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("message %q does not start with the line", err)
			}
		})
	}
}

func TestReadCSVSkipsBadLinesWhenAsked(t *testing.T) {
	in := "0,a,1\nnope,a,1\n1,a,x\n2,b,1\n"
	tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Arrivals) != 2 || len(skipped) != 2 || skipped[0].Line != 2 || skipped[1].Line != 3 {
		t.Fatalf("kept %d, skipped %+v", len(tr.Arrivals), skipped)
	}
	if _, _, err := ReadCSV(strings.NewReader("x,a\ny,b\n"), CSVOptions{SkipBad: true}); err == nil {
		t.Fatal("a trace without one good line was accepted")
	}
}

func TestReadCSVBoundsTheTrace(t *testing.T) {
	in := strings.Repeat("1,a,1\n", 11)
	if _, _, err := ReadCSV(strings.NewReader(in), CSVOptions{MaxArrivals: 10}); err == nil || !strings.Contains(err.Error(), "line 11") {
		t.Fatalf("error %v; want a bound reached on line 11", err)
	}
}

// Spreadsheets save "CSV UTF-8" with a byte order mark before the first
// line, and often CRLF line ends: the header is still a header, and a first
// data line still reads.
func TestReadCSVIgnoresAByteOrderMark(t *testing.T) {
	for name, in := range map[string]string{
		"before a header":    "\ufefftime,key,cost\r\n0,alice,1\r\n0.5,alice,2\r\n",
		"before a data line": "\ufeff0,alice,1\r\n0.5,alice,2\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{})
			if err != nil || len(skipped) != 0 {
				t.Fatal(err, skipped)
			}
			want := []Arrival{{At: 0, Key: 0, Cost: 1}, {At: 500_000, Key: 0, Cost: 2}}
			if len(tr.Arrivals) != len(want) || tr.Arrivals[0] != want[0] || tr.Arrivals[1] != want[1] || len(tr.Keys) != 1 || tr.Keys[0] != "alice" {
				t.Fatalf("arrivals %+v keys %q, want %+v of alice", tr.Arrivals, tr.Keys, want)
			}
		})
	}
}

// A timestamp decades away from the rest is a bad line: a trace spans at
// most ten years (3650 days), and its duration stays a time.Duration.
func TestReadCSVRefusesATimeFarFromTheRest(t *testing.T) {
	in := "2026-01-01T00:00:00Z,k\n2005-01-01T00:00:00Z,k\n2026-01-02T00:00:00Z,k\n"
	_, _, err := ReadCSV(strings.NewReader(in), CSVOptions{})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(le.Reason, "3650 days") {
		t.Fatalf("err %v, want line 2 refused for the span", err)
	}
	tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
	if err != nil || len(skipped) != 1 || skipped[0].Line != 2 {
		t.Fatalf("skipping: %v, skipped %+v", err, skipped)
	}
	if got, want := tr.Duration(), 24*time.Hour+time.Second; got != want {
		t.Errorf("duration %v, want %v (one day, to the whole second after the last)", got, want)
	}
	// Exactly 3650 days apart is still a trace.
	edge := "2020-01-01T00:00:00Z,k\n2029-12-29T00:00:00Z,k\n"
	if tr, _, err := ReadCSV(strings.NewReader(edge), CSVOptions{}); err != nil || tr.Duration() != 3650*24*time.Hour+time.Second {
		t.Fatalf("3650 days: %v", err)
	}
}

// A placeholder time on the first line — Go's zero time or the Unix epoch,
// which exporters write for a missing one — is the bad line, not every
// real line after it: a trace's times are from 2000 to 2299.
func TestReadCSVRefusesAPlaceholderTimeOnTheFirstLine(t *testing.T) {
	for _, bad := range []string{"0001-01-01T00:00:00Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z"} {
		in := "time,key\n" + bad + ",k\n2026-01-01T00:00:00Z,k\n2026-01-01T00:00:01Z,k\n2026-01-01T00:00:02Z,j\n"
		_, _, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || !strings.Contains(le.Reason, "2000") {
			t.Errorf("%s: err %v, want line 2 refused for its time", bad, err)
		}
		tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
		if err != nil || len(skipped) != 1 || skipped[0].Line != 2 || len(tr.Arrivals) != 3 || tr.Duration() != 3*time.Second {
			t.Errorf("%s skipped: err %v, skipped %+v, trace %+v; want line 2 alone skipped, 3 requests over 3s", bad, err, skipped, tr)
		}
	}
	edge := "2000-01-01T00:00:00Z,k\n2299-12-31T23:59:59.999999Z,j\n"
	for _, line := range strings.Split(strings.TrimSpace(edge), "\n") {
		if _, _, err := ReadCSV(strings.NewReader(line+"\n"), CSVOptions{}); err != nil {
			t.Errorf("%s: %v, want it read", line, err)
		}
	}
}

// A line skipped for its time leaves its key out of the trace, as any
// other bad line does: the trace's keys are those of its requests.
func TestReadCSVSkippedLineAddsNoKey(t *testing.T) {
	in := "2026-01-01T00:00:00Z,a\n2005-01-01T00:00:00Z,b\n2026-01-01T00:00:01Z,c\n"
	tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
	if err != nil || len(skipped) != 1 {
		t.Fatalf("err %v, skipped %+v", err, skipped)
	}
	if len(tr.Keys) != 2 || tr.Keys[0] != "a" || tr.Keys[1] != "c" || tr.Arrivals[1].Key != 1 {
		t.Errorf("keys %q, arrivals %+v: want a and c, the keys of the requests read", tr.Keys, tr.Arrivals)
	}
}

// The form of a trace's times is set by its first line read, not by a
// line skipped: an RFC 3339 line with a bad cost does not make every
// seconds offset after it a bad line.
func TestReadCSVTimeFormIsSetByALineRead(t *testing.T) {
	for _, first := range []string{"2026-01-01T00:00:00Z,k,abc", "0.5,k,-1"} {
		in := first + "\n"
		if first[0] == '2' {
			in += "0.25,k\n1.5,k\n"
		} else {
			in += "2026-01-01T00:00:00Z,k\n2026-01-01T00:00:01Z,k\n"
		}
		tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
		if err != nil || len(skipped) != 1 || skipped[0].Line != 1 || len(tr.Arrivals) != 2 {
			t.Errorf("first line %s: err %v, skipped %+v: want line 1 alone skipped", first, err, skipped)
		}
	}
}

// A seconds offset drops the digits below a microsecond, as an RFC 3339
// time does, read from its digits: a request 0.4 µs before a window's end
// stays in that window, and 0.000003 s is 3 µs.
func TestReadCSVOffsetsDropWhatIsBelowAMicrosecond(t *testing.T) {
	for in, want := range map[string]int64{
		"59.9999996": 59_999_999, "0.000003": 3, "0.0000009": 0, "1": 1_000_000, "+2.5": 2_500_000,
		".5": 500_000, "7.": 7_000_000, "3e-6": 3, "1.5e3": 1_500_000_000, "0.1234567891234": 123_456,
		"315360000": 315_360_000_000_000, "0.29": 290_000,
	} {
		tr, _, err := ReadCSV(strings.NewReader(in+",k\n"), CSVOptions{})
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := tr.Arrivals[0].At; got != want {
			t.Errorf("%s read as %d µs, want %d", in, got, want)
		}
	}
	rfc, _, err := ReadCSV(strings.NewReader("2020-01-01T00:00:59.9999996Z,k\n"), CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rfc.Arrivals[0].At; got != 59_999_999 {
		t.Errorf("RFC 3339 read as %d µs", got)
	}
}

// A bad line's reason quotes at most the start of a long field: a trace
// line may be 1 MiB, and its quoted bytes (four times as many for control
// characters) would otherwise be held, and printed, for every bad line.
func TestReadCSVReasonsQuoteTheStartOfALongField(t *testing.T) {
	long := strings.Repeat("\x01", 100_000)
	for _, in := range []string{long + ",k\n", "1,k," + long + "\n", "1,k\n" + long + "Z,k\n", "2026-03-01T12:00:00Z,k\n1" + long + ",k\n"} {
		_, _, err := ReadCSV(strings.NewReader(in), CSVOptions{})
		var le *LineError
		if !errors.As(err, &le) {
			t.Fatalf("error %v", err)
		}
		if len(le.Reason) > 400 || !strings.Contains(le.Reason, `\x01\x01`) {
			t.Errorf("reason of %d bytes: %.120s", len(le.Reason), le.Reason)
		}
	}
}

// Skipping bad lines holds at most MaxSkippedLines of them, whatever the
// trace: the last one listed counts the others.
func TestReadCSVListsAtMostMaxSkippedLines(t *testing.T) {
	in := strings.Repeat("x\n", 5000) + "1,k\n" + strings.Repeat("y\n", 10)
	tr, skipped, err := ReadCSV(strings.NewReader(in), CSVOptions{SkipBad: true})
	if err != nil || len(tr.Arrivals) != 1 {
		t.Fatal(err)
	}
	if len(skipped) != MaxSkippedLines || CountSkipped(skipped) != 5010 {
		t.Fatalf("%d lines listed, standing for %d", len(skipped), CountSkipped(skipped))
	}
	last := skipped[len(skipped)-1]
	if last.Line != MaxSkippedLines || last.More != 5010-MaxSkippedLines || !strings.Contains(last.Error(), "4010 more") {
		t.Errorf("last listed %+v: %v", last, &last)
	}
	_, skipped, err = ReadCSV(strings.NewReader(strings.Repeat("x\n", 3000)), CSVOptions{SkipBad: true})
	if err == nil || !strings.Contains(err.Error(), "3000 lines skipped") || len(skipped) != MaxSkippedLines {
		t.Errorf("%v, %d listed", err, len(skipped))
	}
}
