package sim

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sluice-dev/sluice"
)

// CSVOptions tune ReadCSV.
type CSVOptions struct {
	// SkipBad skips a line that cannot be read and reports it, instead of
	// failing on it.
	SkipBad bool
	// MaxArrivals bounds the trace (≤ 0: DefaultMaxArrivals); more is an
	// error even with SkipBad.
	MaxArrivals int
	// Name labels the trace ("trace <Name>").
	Name string
	// Origin is the instant, in µs since sluice.Epoch, that a time written
	// as a seconds offset counts from. Zero is sluice.Epoch itself, which
	// every window is aligned to: offset 0 starts a window of any length.
	Origin int64
}

// A LineError is a trace line ReadCSV could not read. With SkipBad it is
// reported and the line skipped; otherwise ReadCSV returns it as its error.
type LineError struct {
	Line   int    `json:"line"`   // 1-based line number
	Reason string `json:"reason"` // what is wrong and what was expected
	// More counts the bad lines skipped after this one and not listed: only
	// the last of MaxSkippedLines skipped lines has it.
	More int `json:"more,omitempty"`
}

// MaxSkippedLines is the most bad lines ReadCSV lists under SkipBad; the
// last one listed counts the others (LineError.More), so that skipping a
// file of bad lines takes no memory per line.
const MaxSkippedLines = 1000

// Error returns "line N: reason", and how many more lines were skipped
// after it when More is set.
func (e *LineError) Error() string {
	if e.More > 0 {
		return fmt.Sprintf("line %d: %s (and %d more bad lines after it)", e.Line, e.Reason, e.More)
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
}

// CountSkipped returns how many lines a list of skipped lines stands for:
// those listed and those counted by More.
func CountSkipped(skipped []LineError) int {
	n := len(skipped)
	for i := range skipped {
		n += skipped[i].More
	}
	return n
}

// ReadCSV reads a trace: one request per line as time,key,cost.
//
//   - time is either an RFC 3339 timestamp ("2026-03-01T12:00:00.250Z") or a
//     number of seconds since the trace's origin ("12.25", see
//     CSVOptions.Origin); one trace uses one form throughout. Precision
//     below a microsecond is dropped.
//   - key is who the request counts against: 1 to sluice.MaxKeyLen bytes.
//     Quote it ("a,b") to include a comma.
//   - cost is the units the request spends, an integer ≥ 0; it may be left
//     out (time,key), meaning 1.
//
// A first line starting with the field "time" is a header and is skipped,
// as are blank lines and lines starting with #. A UTF-8 byte order mark
// before the first line is ignored; lines may end in CRLF. Lines need not be in time
// order: the trace is sorted (a stable sort, so equal times keep their
// order). An RFC 3339 time is in the years 2000 to 2299 (else it is a
// bad line: Go's zero time or the Unix epoch stands for a missing time),
// and a trace spans at most 10 years: a time further than that from
// another line's is a bad line. The trace starts at its first request (or at the origin, for
// seconds offsets) and ends on the first whole second after its last.
// Bad lines fail the read with a *LineError naming the line, or are
// skipped and returned when opts.SkipBad is set; a trace without a single
// good line is an error either way. Under SkipBad the first
// MaxSkippedLines bad lines are returned, the last counting any others.
func ReadCSV(r io.Reader, opts CSVOptions) (*Trace, []LineError, error) {
	maxArrivals := opts.MaxArrivals
	if maxArrivals <= 0 {
		maxArrivals = DefaultMaxArrivals
	}
	p := csvParser{opts: opts, ids: map[string]int32{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var skipped []LineError
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		if line == 1 {
			raw = strings.TrimPrefix(raw, "\ufeff") // a UTF-8 byte order mark, as spreadsheets write
		}
		text := strings.TrimSpace(raw)
		if text == "" || text[0] == '#' {
			continue
		}
		a, key, err := p.parse(text)
		if errors.Is(err, errHeader) {
			if !p.sawData {
				p.sawData = true
				continue
			}
			err = errors.New("a header (time,key,cost) is allowed only as the first line")
		}
		p.sawData = true
		if err == nil {
			err = p.roomFor(key)
		}
		if err == nil {
			err = p.span(a.At, line)
		}
		if err != nil {
			le := LineError{Line: line, Reason: err.Error()}
			if !opts.SkipBad {
				return nil, nil, &le
			}
			if len(skipped) < MaxSkippedLines {
				skipped = append(skipped, le)
			} else {
				skipped[len(skipped)-1].More++
			}
			continue
		}
		if len(p.tr.Arrivals) >= maxArrivals {
			e := tooManyRequests(maxArrivals, 0)
			e.Hint = "cut the trace"
			return nil, nil, fmt.Errorf("line %d: trace: %w", line, e)
		}
		a.Key = p.id(key)
		p.timesSeen, p.offsets = true, p.lineOffsets
		p.tr.Arrivals = append(p.tr.Arrivals, a)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, nil, fmt.Errorf("line %d: longer than 1 MiB: is this a CSV trace?", line+1)
		}
		return nil, nil, fmt.Errorf("reading trace: %w", err)
	}
	if len(p.tr.Arrivals) == 0 {
		return nil, skipped, fmt.Errorf("trace has no readable requests (%d lines skipped): want lines of time,key,cost", CountSkipped(skipped))
	}
	tr := &p.tr
	tr.Source = "trace"
	if opts.Name != "" {
		tr.Source += " " + opts.Name
	}
	slices.SortStableFunc(tr.Arrivals, func(a, b Arrival) int { return cmp.Compare(a.At, b.At) })
	tr.Start = tr.Arrivals[0].At
	if p.offsets {
		tr.Start = min(opts.Origin, tr.Start)
	}
	// The span ends on the first whole second after the last arrival.
	span := tr.Arrivals[len(tr.Arrivals)-1].At + 1 - tr.Start
	tr.End = tr.Start + (span+999_999)/1_000_000*1_000_000
	return tr, skipped, nil
}

var errHeader = errors.New("header line")

// csvParser holds what ReadCSV has learned so far.
type csvParser struct {
	opts      CSVOptions
	tr        Trace
	ids       map[string]int32
	sawData   bool
	timesSeen bool // the time form is fixed, by the first request read
	offsets   bool // times are seconds offsets (else RFC 3339)
	// lineOffsets is the form of the line being read.
	lineOffsets bool

	// first and last are the earliest and latest times read (µs), and
	// firstLine and lastLine their lines; valid once tr has an arrival.
	first, last         int64
	firstLine, lastLine int
}

// span admits a request at t, on line, if the trace still spans at most
// maxSpan with it, and records it.
func (p *csvParser) span(t int64, line int) error {
	if len(p.tr.Arrivals) == 0 {
		p.first, p.last, p.firstLine, p.lastLine = t, t, line, line
		return nil
	}
	limit, days := int64(maxSpan/time.Microsecond), int64(maxSpan/(24*time.Hour))
	switch {
	case t < p.first && p.last-t > limit:
		return fmt.Errorf("time is more than %d days before line %d's: a trace spans at most %d days", days, p.lastLine, days)
	case t > p.last && t-p.first > limit:
		return fmt.Errorf("time is more than %d days after line %d's: a trace spans at most %d days", days, p.firstLine, days)
	}
	if t < p.first {
		p.first, p.firstLine = t, line
	}
	if t > p.last {
		p.last, p.lastLine = t, line
	}
	return nil
}

// parse reads one non-blank, non-comment line: its request, Key unset, and
// the key it counts against.
func (p *csvParser) parse(text string) (Arrival, string, error) {
	var fields []string
	if strings.ContainsRune(text, '"') {
		cr := csv.NewReader(strings.NewReader(text))
		cr.FieldsPerRecord = -1
		f, err := cr.Read()
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return Arrival{}, "", fmt.Errorf("bad quoting: %v", err)
		}
		fields = f
	} else {
		fields = strings.Split(text, ",")
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	if strings.EqualFold(fields[0], "time") {
		return Arrival{}, "", errHeader
	}
	if len(fields) < 2 || len(fields) > 3 {
		return Arrival{}, "", fmt.Errorf("%d fields, want time,key,cost (cost optional)", len(fields))
	}
	at, err := p.time(fields[0])
	if err != nil {
		return Arrival{}, "", err
	}
	key := fields[1]
	if key == "" || len(key) > sluice.MaxKeyLen {
		return Arrival{}, "", fmt.Errorf("key must be 1 to %d bytes, got %d", sluice.MaxKeyLen, len(key))
	}
	cost := int64(1)
	if len(fields) == 3 && fields[2] != "" {
		cost, err = strconv.ParseInt(fields[2], 10, 64)
		if err != nil || cost < 0 || cost > sluice.MaxQuantity {
			return Arrival{}, "", fmt.Errorf("cost %s must be an integer in [0, %d]", quoteField(fields[2]), int64(sluice.MaxQuantity))
		}
	}
	return Arrival{At: at, Cost: cost}, key, nil
}

// roomFor reports a key the trace has no room for: a new one beyond MaxKeys.
func (p *csvParser) roomFor(key string) error {
	if _, ok := p.ids[key]; !ok && len(p.tr.Keys) >= MaxKeys {
		return fmt.Errorf("more than %d distinct keys", MaxKeys)
	}
	return nil
}

// id returns key's index in the trace's keys, adding it when it is new;
// roomFor has allowed it.
func (p *csvParser) id(key string) int32 {
	id, ok := p.ids[key]
	if !ok {
		key = strings.Clone(key) // not the line it is part of, up to 1 MiB
		id = int32(len(p.tr.Keys))
		p.ids[key] = id
		p.tr.Keys = append(p.tr.Keys, key)
	}
	return id
}

// time reads a time field in the trace's one form, and sets lineOffsets
// to the form it is written in.
func (p *csvParser) time(s string) (int64, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if p.timesSeen && !p.offsets {
			return 0, fmt.Errorf("time %s is a seconds offset but earlier lines use RFC 3339 timestamps: use one form", quoteField(s))
		}
		if math.IsNaN(secs) || secs < 0 || secs > maxSpan.Seconds() {
			return 0, fmt.Errorf("time offset %s must be in [0, %.0f] seconds", quoteField(s), maxSpan.Seconds())
		}
		p.lineOffsets = true
		return p.opts.Origin + offsetMicros(s, secs), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("time %s is neither RFC 3339 (2026-03-01T12:00:00Z) nor seconds since the start (12.5)", quoteField(s))
	}
	if p.timesSeen && p.offsets {
		return 0, fmt.Errorf("time %s is an RFC 3339 timestamp but earlier lines use seconds offsets: use one form", quoteField(s))
	}
	if y := t.UTC().Year(); y < minTraceYear || y > maxTraceYear {
		return 0, fmt.Errorf("time %s is not in the years %d to %d: a placeholder for a missing time?", quoteField(s), minTraceYear, maxTraceYear)
	}
	p.lineOffsets = false
	return sluice.MicrosSinceEpoch(t), nil
}

// offsetMicros returns the seconds offset s, which strconv.ParseFloat read
// as secs in [0, maxSpan], in whole µs with the digits below a µs dropped,
// as an RFC 3339 time's are: from its decimal digits, never from secs,
// whose binary value puts 0.000003 a hair below 3 µs and 59.9999996 within
// rounding of 60 s. An offset written otherwise (1.5e-3) is read from the
// shortest decimal that is secs.
func offsetMicros(s string, secs float64) int64 {
	if us, ok := decimalMicros(strings.TrimPrefix(s, "+")); ok {
		return us
	}
	us, _ := decimalMicros(strconv.FormatFloat(secs, 'f', -1, 64))
	return us
}

// decimalMicros reads d, digits with at most one '.', as seconds, in whole
// µs (truncated); false when d is not written so.
func decimalMicros(d string) (int64, bool) {
	whole, frac, _ := strings.Cut(d, ".")
	digits := func(s string) bool {
		return strings.Trim(s, "0123456789") == ""
	}
	if whole+frac == "" || !digits(whole) || !digits(frac) {
		return 0, false
	}
	whole = strings.TrimLeft(whole, "0")
	if len(whole) > 12 { // beyond maxSpan, which the caller has checked
		return 0, false
	}
	var us int64
	for _, c := range whole + (frac + "000000")[:6] {
		us = 10*us + int64(c-'0')
	}
	return us, true
}

// minTraceYear and maxTraceYear bound the years of a trace's RFC 3339
// times, so that a placeholder for a missing time (Go's zero time, the Unix
// epoch) is a bad line of its own wherever it stands, rather than the one
// every real line is measured against when it comes first.
const (
	minTraceYear = 2000
	maxTraceYear = 2299
)

// maxQuoted is the most bytes of a field a LineError quotes.
const maxQuoted = 64

// quoteField quotes field s for a LineError, cut to its first maxQuoted
// bytes (on a character boundary, then "…"): a line may hold up to 1 MiB,
// which quoted, once per bad line, would multiply what a trace takes.
func quoteField(s string) string {
	if len(s) <= maxQuoted {
		return strconv.Quote(s)
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
