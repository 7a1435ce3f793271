package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// A CallFunc makes one call (a decision, a request) and reports whether it
// was admitted; an error is a failed call. It is used by one goroutine.
type CallFunc func() (admitted bool, err error)

// LoadResult is what one load run measured: the calls completed while the
// measurement ran (warm-up excluded) and their latencies.
type LoadResult struct {
	Workers int
	// Offered is the paced rate asked for (calls/s), 0 for a closed loop.
	Offered float64
	Calls   int64
	Errors  int64
	Refused int64
	Elapsed time.Duration
	// Lat are the calls' latencies, sorted: from the call's start to its
	// end. Late are, for a paced run, from the time the schedule gave the
	// call to its end: they include the time a worker fell behind.
	Lat, Late []time.Duration
	// FirstErr is the first error seen, if any.
	FirstErr error
}

// Rate is the completed calls per second.
func (r *LoadResult) Rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Calls) / r.Elapsed.Seconds()
}

// Pct returns the p-th percentile (0 < p ≤ 100) of lat.
func Pct(lat []time.Duration, p float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	i := int(float64(len(lat))*p/100+0.5) - 1
	return lat[min(max(i, 0), len(lat)-1)]
}

// Ms formats d in milliseconds with 3 decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.3f", float64(d)/float64(time.Millisecond)) }

// phases of a run
const (
	phaseWarm = iota
	phaseMeasure
	phaseStop
)

// ClosedLoop runs workers goroutines, each calling its own CallFunc
// (newWorker(w)) back to back: warm-up first, not counted, then the
// measurement for d.
func ClosedLoop(workers int, warmup, d time.Duration, newWorker func(w int) CallFunc) LoadResult {
	return run(workers, 0, warmup, d, newWorker, Hooks{})
}

// Hooks run just before and just after a run's measurement (to read CPU
// counters and the like).
type Hooks struct{ Begin, End func() }

// ClosedLoopHooks is ClosedLoop with hooks.
func ClosedLoopHooks(workers int, warmup, d time.Duration, newWorker func(w int) CallFunc, h Hooks) LoadResult {
	return run(workers, 0, warmup, d, newWorker, h)
}

// PacedHooks is Paced with hooks.
func PacedHooks(workers int, rate float64, warmup, d time.Duration, newWorker func(w int) CallFunc, h Hooks) LoadResult {
	return run(workers, rate, warmup, d, newWorker, h)
}

// Paced runs workers goroutines that together start rate calls per second
// on a fixed schedule (worker w takes arrivals w, w+workers, …), each
// waiting for its next arrival time; a worker that falls behind calls at
// once. The latencies from the schedule (Late) show how far behind.
func Paced(workers int, rate float64, warmup, d time.Duration, newWorker func(w int) CallFunc) LoadResult {
	return run(workers, rate, warmup, d, newWorker, Hooks{})
}

func run(workers int, rate float64, warmup, d time.Duration, newWorker func(w int) CallFunc, h Hooks) LoadResult {
	var (
		phase atomic.Int32
		wg    sync.WaitGroup
		mu    sync.Mutex
		res   = LoadResult{Workers: workers, Offered: rate}
	)
	calls := make([]CallFunc, workers)
	for w := range calls {
		calls[w] = newWorker(w)
	}
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			call := calls[w]
			capacity := 1 << 14
			if rate > 0 {
				capacity = int(rate/float64(workers)*d.Seconds()*1.1) + 16
			}
			lat := make([]time.Duration, 0, capacity)
			var late []time.Duration
			if rate > 0 {
				late = make([]time.Duration, 0, capacity)
			}
			var n, errs, refused int64
			var firstErr error
			var interval time.Duration
			if rate > 0 {
				interval = time.Duration(float64(workers) / rate * float64(time.Second))
			}
			next := start.Add(time.Duration(float64(w) / max(rate, 1) * float64(time.Second)))
			for k := 0; ; k++ {
				if rate > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
					}
				}
				p := phase.Load()
				if p == phaseStop {
					break
				}
				t0 := time.Now()
				ok, err := call()
				t1 := time.Now()
				if p == phaseMeasure && phase.Load() == phaseMeasure {
					n++
					lat = append(lat, t1.Sub(t0))
					if rate > 0 {
						late = append(late, t1.Sub(next))
					}
					if err != nil {
						errs++
						if firstErr == nil {
							firstErr = err
						}
					} else if !ok {
						refused++
					}
				}
				if rate > 0 {
					next = next.Add(interval)
				}
			}
			mu.Lock()
			res.Calls += n
			res.Errors += errs
			res.Refused += refused
			res.Lat = append(res.Lat, lat...)
			res.Late = append(res.Late, late...)
			if res.FirstErr == nil {
				res.FirstErr = firstErr
			}
			mu.Unlock()
		})
	}
	time.Sleep(warmup)
	if h.Begin != nil {
		h.Begin()
	}
	m0 := time.Now()
	phase.Store(phaseMeasure)
	time.Sleep(d)
	phase.Store(phaseStop)
	res.Elapsed = time.Since(m0)
	if h.End != nil {
		h.End()
	}
	wg.Wait()
	slices.Sort(res.Lat)
	slices.Sort(res.Late)
	return res
}

// Walker visits n keys in a full cycle from its own offset with its own
// stride (coprime with n), so that workers spread over all keys.
type Walker struct{ i, stride, n int }

// NewWalker returns worker w's walk over n keys.
func NewWalker(w, n int) *Walker {
	stride := (7919 + 2*w) % n
	for stride == 0 || gcd(stride, n) != 1 {
		stride++
	}
	return &Walker{i: (w * 20011) % n, stride: stride, n: n}
}

// Next returns the next key index.
func (k *Walker) Next() int {
	i := k.i
	k.i += k.stride
	if k.i >= k.n {
		k.i -= k.n
	}
	return i
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// RawHTTP is one load goroutine's HTTP/1.1 client: a single keep-alive
// connection to addr on which it writes prebuilt request bytes and reads each
// response (status line, headers, a Content-Length or chunked body) with a
// bufio.Reader, so that the load generator spends as little CPU per request
// as it can (net/http's client costs about as much as the server's handling
// of a decision). It dials on first use and again after any error or a
// "Connection: close". It is not safe for concurrent use.
type RawHTTP struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
	body []byte
}

// NewRawHTTP returns a client of the HTTP server at addr (host:port); it
// dials on the first Do.
func NewRawHTTP(addr string) *RawHTTP { return &RawHTTP{addr: addr} }

// Do writes req, a complete HTTP/1.1 request, and reads the response. It
// returns the status code and the body, which is valid until the next Do.
func (c *RawHTTP) Do(req []byte) (status int, body []byte, err error) {
	if c.conn == nil {
		conn, err := net.Dial("tcp", c.addr)
		if err != nil {
			return 0, nil, fmt.Errorf("dial %s: %w", c.addr, err)
		}
		c.conn = conn
		if c.r == nil {
			c.r = bufio.NewReaderSize(conn, 16<<10)
		} else {
			c.r.Reset(conn)
		}
	}
	if _, err := c.conn.Write(req); err != nil {
		c.Close()
		return 0, nil, fmt.Errorf("write: %w", err)
	}
	status, body, keep, err := c.read()
	if err != nil || !keep {
		c.Close()
	}
	return status, body, err
}

// Close closes the connection, if one is open.
func (c *RawHTTP) Close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// read reads one response: its status, body and whether the connection
// stays open.
func (c *RawHTTP) read() (status int, body []byte, keep bool, err error) {
	line, err := c.line()
	if err != nil {
		return 0, nil, false, fmt.Errorf("status line: %w", err)
	}
	// "HTTP/1.1 200 OK"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, false, fmt.Errorf("malformed status line %q", line)
	}
	keep = line[7] == '1'
	length, chunked := int64(-1), false
	for {
		h, err := c.line()
		if err != nil {
			return 0, nil, false, fmt.Errorf("header: %w", err)
		}
		if len(h) == 0 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return 0, nil, false, fmt.Errorf("malformed header %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "Content-Length"):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return 0, nil, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case asciiEqualFold(name, "Transfer-Encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "Connection"):
			if asciiEqualFold(value, "close") {
				keep = false
			}
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		err = c.chunked()
	case length >= 0:
		err = c.readN(int(length))
	case status == 204 || status == 304 || status < 200:
	default: // the body runs to the end of the connection
		c.body, err = readAllInto(c.r, c.body)
		keep = false
	}
	if err != nil {
		return 0, nil, false, fmt.Errorf("body: %w", err)
	}
	return status, c.body, keep, nil
}

// line reads one header line without its CRLF.
func (c *RawHTTP) line() ([]byte, error) {
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	l = bytes.TrimSuffix(l[:len(l)-1], []byte("\r"))
	return l, nil
}

// readN appends n bytes of body.
func (c *RawHTTP) readN(n int) error {
	c.body = slices.Grow(c.body, n)
	k := len(c.body)
	c.body = c.body[:k+n]
	_, err := io.ReadFull(c.r, c.body[k:])
	return err
}

// chunked reads a chunked body and its trailers.
func (c *RawHTTP) chunked() error {
	for {
		l, err := c.line()
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(l, ';'); i >= 0 {
			l = l[:i]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(l)), 16, 32)
		if err != nil || n < 0 {
			return fmt.Errorf("malformed chunk size %q", l)
		}
		if n == 0 {
			for { // trailers, up to the empty line
				t, err := c.line()
				if err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if err := c.readN(int(n)); err != nil {
			return err
		}
		if l, err := c.line(); err != nil || len(l) != 0 {
			return fmt.Errorf("chunk of %d bytes not followed by CRLF", n)
		}
	}
}

func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	_, err := buf.ReadFrom(r)
	return buf.Bytes(), err
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
