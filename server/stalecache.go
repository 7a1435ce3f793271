package server

import (
	"container/list"
	"crypto/sha256"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of the stale cache: of what its copies keep and the copies being
// taken hold, together, and of one copy (each its body, header fields, the
// values its Vary names and staleEntryOverhead for its key and
// bookkeeping).
const (
	staleMaxBytes      = 64 << 20
	staleMaxEntry      = 1 << 20
	staleEntryOverhead = 256
)

// staleCache keeps recent GET responses (recorded from level 1 up) so that
// at level 2 reads (GET, HEAD) can be answered without the upstream; never
// those of the degradation class health, which protect sends to the
// upstream at every level.
// Entries are keyed by the request headers that name the client or choose
// its limits (its credentials, a tenant header), its Authorization, cookies
// and origin as well as the forwarding headers that describe the request
// (the host, scheme, port, prefix or URL it was sent to) and the URL, so
// one client never sees another's response; responses that set cookies or
// may not be served stale (servableStale), and answers to requests that
// forbid keeping them (no-store), are not kept, and neither are the fields
// that describe one response rather than its content. A copy whose
// response varies (Vary) by other request headers answers only the
// requests with the same values of them; Vary: * is not kept, nor a Vary
// by a header sluice rewrites on the way to the upstream (varies).
//
// Copies are dropped once older than ttl: as a new one is recorded, and by
// a timer armed while the cache holds any (expire), so that copies recorded
// during an overload are not held once it has ended.
type staleCache struct {
	ttl   time.Duration
	clock func() time.Time
	// headers are the request headers that are part of the key; dropped
	// the response headers left out of a copy.
	headers, dropped []string

	// maxBytes bounds, as one budget, what the copies kept hold (bytes)
	// and the buffers of the copies being taken (copying) together;
	// maxEntry one copy (staleMaxBytes, staleMaxEntry).
	maxBytes, maxEntry int

	mu      sync.Mutex
	entries map[[32]byte]*staleEntry
	// order holds the entries' keys, the oldest recorded at the front.
	order *list.List
	// bytes is what the copies kept count (their entries' size); copying
	// the buffers of the answers still being copied. bytes+copying is at
	// most maxBytes: a copy being taken grows by dropping the oldest copies
	// kept to make room (grow), and is dropped itself only when the copies
	// being taken hold the whole budget.
	bytes, copying int
	// armed says a timer will call expire.
	armed bool
}

type staleEntry struct {
	at     time.Time
	status int
	header http.Header
	body   []byte
	// age is the Age the response came with, in seconds: how old it was
	// when recorded.
	age int64
	// vary holds the values the recorded request had of each header the
	// response's Vary names.
	vary map[string]string
	// size is what the entry counts against the cache's maxBytes; elem its place
	// in order.
	size int
	elem *list.Element
}

// entrySize is what e keeps, as the budget counts it.
func entrySize(e *staleEntry) int {
	n := staleEntryOverhead + len(e.body)
	for k, vs := range e.header {
		n += len(k)
		for _, v := range vs {
			n += len(v)
		}
	}
	for k, v := range e.vary {
		n += len(k) + len(v)
	}
	return n
}

// varies returns the request header values of r that the response header
// h varies by (its Vary), and false for Vary: * and for a Vary by a header
// that sluice sets, rewrites or removes on the way to the upstream
// (forward: untrustedHop's, X-Real-IP, X-Forwarded-For…, and
// methodOverride's): the upstream answered its value as sent, which the
// value received does not tell.
func varies(h http.Header, r *http.Request) (map[string]string, bool) {
	var out map[string]string
	for _, v := range h.Values("Vary") {
		for name := range strings.SplitSeq(v, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			switch {
			case name == "":
			case name == "*", untrustedHop(name), methodOverride(name):
				return nil, false
			default:
				if out == nil {
					out = map[string]string{}
				}
				out[name] = varyValue(r, name)
			}
		}
	}
	return out, true
}

// varyValue is r's value of the header named name as a copy keeps it:
// every line, joined.
func varyValue(r *http.Request, name string) string {
	return strings.Join(r.Header.Values(name), ", ")
}

// answers reports whether e was recorded for a request with r's values of
// the headers its response varies by.
func (e *staleEntry) answers(r *http.Request) bool {
	for name, v := range e.vary {
		if varyValue(r, name) != v {
			return false
		}
	}
	return true
}

// newStaleCache returns a cache of copies servable for ttl, keyed by the
// request headers keyHeaders and Authorization, leaving the response
// headers dropped out of its copies; nil when ttl is not positive.
// Authorization is always part of the key: it names the client to the
// upstream whether or not the limits read it (RFC 9111, 3.5).
func newStaleCache(ttl time.Duration, clock func() time.Time, keyHeaders, dropped []string) *staleCache {
	if ttl <= 0 {
		return nil
	}
	headers := slices.Clone(keyHeaders)
	if !slices.Contains(headers, "Authorization") {
		headers = append(headers, "Authorization")
	}
	return &staleCache{ttl: ttl, clock: clock, headers: headers, dropped: dropped,
		maxBytes: staleMaxBytes, maxEntry: staleMaxEntry,
		entries: map[[32]byte]*staleEntry{}, order: list.New()}
}

// key is r's entry: every line of each key header (a header value holds
// no control bytes, which end a line and a header here), the scheme the
// client used, every forwarding header that describes the request
// (requestHop: X-Forwarded-Host, -Proto, -Prefix, -Port, X-Original-URL…,
// which forward passes on from a trusted peer and an upstream builds links
// or routes by; of Forwarded, its host and proto), host and URL.
func (c *staleCache) key(r *http.Request) [32]byte {
	var b strings.Builder
	for _, h := range c.headers {
		writeLines(&b, r.Header.Values(h))
	}
	if r.TLS != nil {
		b.WriteString("https")
	}
	b.WriteByte(1)
	var hops []string
	for name := range r.Header {
		if requestHop(name) && !sameHeaderName(name, "forwarded") {
			hops = append(hops, name)
		}
	}
	slices.Sort(hops)
	for _, name := range hops {
		b.WriteString(name)
		b.WriteByte(':')
		writeLines(&b, r.Header[name])
	}
	b.WriteByte(1)
	forwardedHostProto(&b, r.Header.Values("Forwarded"))
	b.WriteByte(1)
	b.WriteString(r.Host)
	b.WriteByte(0)
	b.WriteString(r.URL.RequestURI())
	return sha256.Sum256([]byte(b.String()))
}

// writeLines writes each of the lines vs to b, then ends the list.
func writeLines(b *strings.Builder, vs []string) {
	for _, v := range vs {
		b.WriteString(v)
		b.WriteByte(0)
	}
	b.WriteByte(1)
}

// forwardedHostProto writes the host and proto parameters of the Forwarded
// field values fs (RFC 7239) to b, in their order, leaving out the others:
// for and by name one client, which the key leaves to the key headers.
func forwardedHostProto(b *strings.Builder, fs []string) {
	for _, f := range fs {
		for elem := range strings.SplitSeq(f, ",") {
			for pair := range strings.SplitSeq(elem, ";") {
				name, value, _ := strings.Cut(strings.TrimSpace(pair), "=")
				if name = strings.ToLower(name); name == "host" || name == "proto" {
					b.WriteString(name)
					b.WriteByte('=')
					b.WriteString(strings.Trim(value, `"`))
					b.WriteByte(0)
				}
			}
			b.WriteByte(',')
		}
	}
}

// staleStatus is the Cache-Status entry (RFC 9211) of an answer served
// from a copy.
const staleStatus = "sluice; hit; detail=stale-while-degraded"

// serve answers r, a GET or a HEAD, from the cache if it can: a HEAD with
// the header fields of the same GET's copy, without its body. A copy is
// served while the time it has been held is in [0, ttl], with an Age of
// the Age its response came with plus that time (RFC 9111, 4.2.3), and
// the response's Cache-Status followed by sluice's entry (RFC 9211, 2).
func (c *staleCache) serve(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	c.mu.Lock()
	e := c.entries[c.key(r)]
	c.mu.Unlock()
	if e == nil || !e.answers(r) {
		return false
	}
	held := c.clock().Sub(e.at)
	if held < 0 || held > c.ttl { // a clock stepped back makes ages negative
		return false
	}
	h := w.Header()
	for k, v := range e.header {
		h[k] = v
	}
	h.Set("Age", strconv.FormatInt(min(e.age+int64(held/time.Second), maxAge), 10))
	h["Cache-Status"] = append(slices.Clip(e.header["Cache-Status"]), staleStatus)
	w.WriteHeader(e.status)
	if r.Method == http.MethodGet {
		w.Write(e.body)
	}
	return true
}

// maxAge is the largest Age sent: RFC 9111, 1.2.2's bound of a delta-seconds.
const maxAge = 1 << 31

// upstreamAge is the Age of the response header h in seconds (RFC 9111,
// 5.1): its first line, at most maxAge; 0 when it is not a number of
// seconds.
func upstreamAge(h http.Header) int64 {
	age, err := strconv.ParseUint(strings.TrimSpace(h.Get("Age")), 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && age > maxAge {
		return maxAge
	}
	if err != nil {
		return 0
	}
	return int64(age)
}

// cacheDirective reports whether the Cache-Control field of h holds any of
// the directives names (in lower case), with or without an argument.
func cacheDirective(h http.Header, names ...string) bool {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
			if slices.Contains(names, strings.ToLower(strings.TrimSpace(name))) {
				return true
			}
		}
	}
	return false
}

// servableStale reports whether a response of header h may be served
// stale, without asking its origin (RFC 9111, 4.2.4): none of its
// Cache-Control directives forbids keeping it (no-store, private) or
// serving it unvalidated (no-cache, must-revalidate, proxy-revalidate, and
// s-maxage, which is proxy-revalidate to a shared cache: RFC 9111,
// 5.2.2.10).
func servableStale(h http.Header) bool {
	return !cacheDirective(h, "no-store", "private", "no-cache", "must-revalidate", "proxy-revalidate", "s-maxage")
}

// keepable reports whether an answer of status and header h to r may be
// kept: a 200 that sets no cookie (no Set-Cookie field at all, whatever
// its lines hold), may be served stale and does not vary by everything
// (Vary: *) nor by a header sluice rewrites (varies), to a request that
// does not forbid keeping it (Cache-Control: no-store, RFC 9111, 5.2.1.5).
func keepable(status int, h http.Header, r *http.Request) bool {
	if status != http.StatusOK || len(h.Values("Set-Cookie")) > 0 || !servableStale(h) ||
		cacheDirective(r.Header, "no-store") {
		return false
	}
	_, ok := varies(h, r)
	return ok
}

// record serves r with next and keeps a cacheable response.
func (c *staleCache) record(next http.Handler, w http.ResponseWriter, r *http.Request) {
	tw := &teeWriter{ResponseWriter: w, c: c, r: r}
	defer tw.release()
	next.ServeHTTP(tw, r)
	if tw.status == 0 || tw.skip || !keepable(tw.status, tw.Header(), r) {
		return
	}
	vary, _ := varies(tw.Header(), r)
	e := &staleEntry{at: c.clock(), status: tw.status, header: tw.Header().Clone(), body: tw.kept(),
		age: upstreamAge(tw.Header()), vary: vary}
	e.header.Del("Age") // serve sets it
	for _, h := range c.dropped {
		e.header.Del(h) // per-response, not per-content
	}
	if e.size = entrySize(e); e.size > c.maxEntry {
		return
	}
	k := c.key(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.copying -= tw.counted // kept now, no longer being taken
	tw.counted = 0
	if old := c.entries[k]; old != nil {
		c.drop(k, old)
	}
	c.entries[k] = e
	e.elem = c.order.PushBack(k)
	c.bytes += e.size
	c.dropOld(e.at, e.elem)
	if c.bytes+c.copying > c.maxBytes { // the copies being taken hold the rest
		c.drop(k, e)
	}
	c.arm(e.at)
}

// dropOld drops, oldest recorded first, the copies older than ttl at now
// and those over the budget, up to keep (nil: all): the copies kept and
// being taken hold at most maxBytes together, and the copies kept at most
// maxBytes less what one copy may hold, the room an answer of unknown
// length is copied into (see grow). Called with mu held.
func (c *staleCache) dropOld(now time.Time, keep *list.Element) {
	for f := c.order.Front(); f != nil && f != keep; f = c.order.Front() {
		fk := f.Value.([32]byte)
		fe := c.entries[fk]
		if c.bytes+c.copying <= c.maxBytes && c.bytes <= c.maxBytes-c.maxEntry && now.Sub(fe.at) <= c.ttl {
			break
		}
		c.drop(fk, fe)
	}
}

// grow counts n more bytes of buffer of a copy being taken. A copy whose
// answer said its length, and so will be kept, makes room within maxBytes
// by dropping the oldest copies kept: a fresh answer is worth more than
// the oldest copy. One of unknown length (streamed) may still outgrow what
// a copy may hold and be dropped, so it takes only the room left (at least
// one copy's worth while no other is being taken: see dropOld), never a
// copy kept; the copies kept make room for it when it is kept (record).
// grow reports false, counting nothing, when there is no room.
func (c *staleCache) grow(n int, sized bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.copying+n > c.maxBytes || !sized && c.bytes+c.copying+n > c.maxBytes {
		return false
	}
	c.copying += n
	c.dropOld(c.clock(), nil)
	return true
}

// arm sets a timer to call expire when the oldest copy will be older than
// ttl at now, unless one is set or there is no copy; never sooner than
// ttl/4 from now, so that a clock that does not move (a test's) wakes it
// a bounded number of times. Called with mu held.
func (c *staleCache) arm(now time.Time) {
	f := c.order.Front()
	if c.armed || f == nil {
		return
	}
	c.armed = true
	wait := c.entries[f.Value.([32]byte)].at.Add(c.ttl).Sub(now)
	time.AfterFunc(min(max(wait, c.ttl/4), c.ttl)+time.Millisecond, c.expire)
}

// expire drops the copies older than ttl, and arms the timer again while
// copies are left.
func (c *staleCache) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.armed = false
	c.dropOld(now, nil)
	c.arm(now)
}

// drop removes the entry e of key k; called with mu held.
func (c *staleCache) drop(k [32]byte, e *staleEntry) {
	c.order.Remove(e.elem)
	delete(c.entries, k)
	c.bytes -= e.size
}

// teeWriter copies what it writes of an answer to r that c may keep, up to
// c.maxEntry bytes, counting the buffer it holds them in (its capacity,
// not only what it holds yet) in c.copying until release, or until c
// keeps the copy (record). status is
// the final status written through it, 0 while there is none: an answer
// that switched protocols (written on the hijacked connection) or that was
// never written (its client left first) is not one to keep. skip says the
// answer is not copied: it may not be kept, or is too large for the bounds.
type teeWriter struct {
	http.ResponseWriter
	c      *staleCache
	r      *http.Request
	status int
	buf    []byte
	skip   bool
	// sized says the answer gave its Content-Length, and its copy fits
	// what a copy may hold (see begin).
	sized bool
	// counted is what the copy counts in c.copying.
	counted int
}

// begin notes the answer's final status, and whether to copy it: not
// when it may not be kept, nor when its Content-Length and header fields
// make more than a copy may hold (entrySize), which would drop older
// copies to make room for nothing.
func (w *teeWriter) begin(code int) {
	w.status = code
	n, err := strconv.ParseInt(w.Header().Get("Content-Length"), 10, 64)
	if err == nil && n >= 0 {
		size := n + staleEntryOverhead
		for k, vs := range w.Header() {
			size += int64(len(k))
			for _, v := range vs {
				size += int64(len(v))
			}
		}
		w.sized = size <= int64(w.c.maxEntry)
		w.skip = !w.sized
	}
	w.skip = w.skip || !keepable(code, w.Header(), w.r)
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.begin(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.begin(http.StatusOK)
	}
	w.copy(p)
	return w.ResponseWriter.Write(p)
}

// copy adds p to the copy, or drops the copy when p takes it past
// c.maxEntry or the buffers of the answers being copied past c.maxBytes
// (c.grow). The buffer grows by doubling, up to c.maxEntry.
func (w *teeWriter) copy(p []byte) {
	if w.skip || len(p) == 0 {
		return
	}
	need := len(w.buf) + len(p)
	if need <= cap(w.buf) {
		w.buf = append(w.buf, p...)
		return
	}
	if need <= w.c.maxEntry {
		size := min(max(need, 2*cap(w.buf)), w.c.maxEntry)
		if n := size - cap(w.buf); w.c.grow(n, w.sized) {
			w.counted += n
			w.buf = append(make([]byte, 0, size), w.buf...)
			w.buf = append(w.buf, p...)
			return
		}
	}
	w.skip = true
	w.buf = nil
	w.release()
}

// kept is the copy's body as an entry keeps it: in a buffer of its length.
func (w *teeWriter) kept() []byte {
	if len(w.buf) == cap(w.buf) {
		return w.buf
	}
	return append(make([]byte, 0, len(w.buf)), w.buf...)
}

// release stops counting the copy in c.copying.
func (w *teeWriter) release() {
	if w.counted == 0 {
		return
	}
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	w.c.copying -= w.counted
	w.counted = 0
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
