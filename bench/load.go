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

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
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
// once. The latencies from the schedule (Late) show how far behind. A
// worker still behind when the measurement begins starts its schedule
// afresh: what the warm-up fell behind on is not made up during the
// measurement, which thus offers rate.
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
			measuring := false
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
				if p == phaseMeasure && !measuring {
					measuring = true
					// The calls the warm-up fell behind on are dropped, not
					// made in a burst: the measurement offers the rate asked for.
					if rate > 0 && time.Until(next) < 0 {
						next = time.Now()
					}
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

// RawGRPC is a minimal gRPC client for unary calls over one HTTP/2
// connection (h2c), shared by several load goroutines: each call writes a
// HEADERS and a DATA frame (the prebuilt message) and waits for the
// response, which one reader goroutine per connection reads and hands over.
// Frames of calls made at once go out in one write.
// It honours the server's connection flow-control window, answers SETTINGS
// and PING, and gives the server a large receive window. It exists because
// grpc-go's client costs about as much CPU per call as the server's
// handling of it; the server sees the frames any gRPC client sends. Close
// it when done.
type RawGRPC struct {
	conn net.Conn
	// Writing: frames, HPACK state and flow control, under wmu.
	wmu     sync.Mutex
	sent    *sync.Cond // signalled when the send window grows
	bw      *bufio.Writer
	fr      *http2.Framer
	henc    *hpack.Encoder
	hbuf    bytes.Buffer
	nextID  uint32
	sendWin int64 // connection send window
	headers []hpack.HeaderField
	data    []byte // a DATA frame's payload
	// queued counts the calls waiting for wmu or holding it.
	queued atomic.Int32
	// calls in flight by stream id, and the connection's error, under mu.
	mu    sync.Mutex
	calls map[uint32]*GRPCCall
	err   error
	done  chan struct{}
}

// GRPCCall is one load goroutine's call in flight, reused from call to
// call: the response's HTTP and gRPC status, and its DATA (gRPC
// length-prefixed messages; see Message).
type GRPCCall struct {
	ready              chan struct{}
	httpStatus, status string
	msg                []byte
	err                error
}

// Message returns the response's one message without its 5-byte prefix,
// or an error if the call did not end with HTTP 200, gRPC status 0 and
// exactly one uncompressed message.
func (call *GRPCCall) Message() ([]byte, error) {
	switch {
	case call.httpStatus != "200":
		return nil, fmt.Errorf("HTTP status %q", call.httpStatus)
	case call.status != "0":
		return nil, fmt.Errorf("gRPC status %q", call.status)
	case len(call.msg) < 5 || call.msg[0] != 0:
		return nil, fmt.Errorf("no uncompressed message in %d bytes", len(call.msg))
	}
	n := int(call.msg[1])<<24 | int(call.msg[2])<<16 | int(call.msg[3])<<8 | int(call.msg[4])
	if n != len(call.msg)-5 {
		return nil, fmt.Errorf("message of %d bytes in %d", n, len(call.msg)-5)
	}
	return call.msg[5:], nil
}

// NewGRPCCall returns a call to use with RawGRPC.Call.
func NewGRPCCall() *GRPCCall { return &GRPCCall{ready: make(chan struct{}, 1)} }

// DialRawGRPC connects to the gRPC server at addr for calls to method
// (e.g. "/pkg.Service/Method").
func DialRawGRPC(addr, method string) (*RawGRPC, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	c := &RawGRPC{conn: conn, nextID: 1, sendWin: 65535, calls: map[uint32]*GRPCCall{}, done: make(chan struct{}),
		bw: bufio.NewWriterSize(conn, 32<<10)}
	c.sent = sync.NewCond(&c.wmu)
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(conn, 32<<10))
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.henc = hpack.NewEncoder(&c.hbuf)
	c.headers = []hpack.HeaderField{{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":path", Value: method}, {Name: ":authority", Value: addr}, {Name: "content-type", Value: "application/grpc"},
		{Name: "te", Value: "trailers"}}
	c.bw.WriteString(http2.ClientPreface)
	const window = 1 << 30
	err = c.fr.WriteSettings(http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: window})
	if err == nil {
		err = c.fr.WriteWindowUpdate(0, window-65535)
	}
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("http2 preface: %w", err)
	}
	go c.read()
	return c, nil
}

// Close closes the connection; calls in flight fail.
func (c *RawGRPC) Close() {
	c.conn.Close()
	<-c.done
}

// Call sends msg (a marshalled request) and waits for the response into
// call. An error is a transport or HTTP/2 failure; the gRPC status is in
// call.status ("0" for OK).
func (c *RawGRPC) Call(call *GRPCCall, msg []byte) error {
	call.httpStatus, call.status, call.msg, call.err = "", "", call.msg[:0], nil
	c.queued.Add(1)
	c.wmu.Lock()
	id := c.nextID
	c.nextID += 2
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		c.queued.Add(-1)
		c.wmu.Unlock()
		return err
	}
	c.calls[id] = call
	c.mu.Unlock()
	err := c.send(id, msg)
	// The last writer in line flushes for those before it, as gRPC
	// clients and Envoy do: one write system call for the frames of calls
	// that were made at once.
	if c.queued.Add(-1) == 0 && err == nil {
		err = c.bw.Flush()
	}
	c.wmu.Unlock()
	if err != nil {
		c.fail(err)
	}
	<-call.ready
	return call.err
}

// send writes one call's frames into the buffer; wmu is held.
func (c *RawGRPC) send(id uint32, msg []byte) error {
	c.hbuf.Reset()
	for _, f := range c.headers {
		if err := c.henc.WriteField(f); err != nil {
			return err
		}
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hbuf.Bytes(), EndHeaders: true}); err != nil {
		return err
	}
	n := int64(5 + len(msg))
	for c.sendWin < n {
		c.mu.Lock()
		err := c.err
		c.mu.Unlock()
		if err != nil {
			return err
		}
		c.sent.Wait()
	}
	c.sendWin -= n
	c.data = append(c.data[:0], 0, byte(len(msg)>>24), byte(len(msg)>>16), byte(len(msg)>>8), byte(len(msg)))
	c.data = append(c.data, msg...)
	return c.fr.WriteData(id, true, c.data)
}

// read is the connection's reader: it dispatches frames until an error.
func (c *RawGRPC) read() {
	defer close(c.done)
	var unacked uint32
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.fail(fmt.Errorf("http2 read: %w", err))
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if f.IsAck() {
				continue
			}
			if err := c.write(func() error { return c.fr.WriteSettingsAck() }); err != nil {
				c.fail(err)
				return
			}
		case *http2.PingFrame:
			if f.IsAck() {
				continue
			}
			if err := c.write(func() error { return c.fr.WritePing(true, f.Data) }); err != nil {
				c.fail(err)
				return
			}
		case *http2.WindowUpdateFrame:
			if f.StreamID == 0 {
				c.wmu.Lock()
				c.sendWin += int64(f.Increment)
				c.sent.Broadcast()
				c.wmu.Unlock()
			}
		case *http2.MetaHeadersFrame:
			call := c.lookup(f.StreamID, f.StreamEnded())
			if call == nil {
				continue
			}
			for _, hf := range f.Fields {
				switch hf.Name {
				case ":status":
					call.httpStatus = hf.Value
				case "grpc-status":
					call.status = hf.Value
				}
			}
			if f.StreamEnded() {
				call.ready <- struct{}{}
			}
		case *http2.DataFrame:
			unacked += uint32(len(f.Data()))
			call := c.lookup(f.StreamID, f.StreamEnded())
			if call != nil {
				call.msg = append(call.msg, f.Data()...)
				if f.StreamEnded() {
					call.ready <- struct{}{}
				}
			}
			if unacked > 1<<20 {
				n := unacked
				unacked = 0
				if err := c.write(func() error { return c.fr.WriteWindowUpdate(0, n) }); err != nil {
					c.fail(err)
					return
				}
			}
		case *http2.RSTStreamFrame:
			if call := c.lookup(f.StreamID, true); call != nil {
				call.err = fmt.Errorf("stream reset: %v", f.ErrCode)
				call.ready <- struct{}{}
			}
		case *http2.GoAwayFrame:
			c.fail(fmt.Errorf("http2 GOAWAY: %v", f.ErrCode))
			// the server closes the connection; calls fail then
		}
	}
}

// write runs w (a frame write) under wmu and flushes.
func (c *RawGRPC) write(w func() error) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := w(); err != nil {
		return err
	}
	return c.bw.Flush()
}

// lookup returns the call of stream id, removing it when its stream ends.
func (c *RawGRPC) lookup(id uint32, end bool) *GRPCCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	call := c.calls[id]
	if end {
		delete(c.calls, id)
	}
	return call
}

// fail records the connection's first error and fails every call in
// flight.
func (c *RawGRPC) fail(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	calls := c.calls
	c.calls = map[uint32]*GRPCCall{}
	c.mu.Unlock()
	for _, call := range calls {
		call.err = err
		call.ready <- struct{}{}
	}
	c.conn.Close()
	c.wmu.Lock()
	c.sent.Broadcast()
	c.wmu.Unlock()
}
