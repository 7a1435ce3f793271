package server

import (
	"bytes"
	"container/list"
	"crypto/sha256"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Bounds of the stale cache: of what all its copies keep, and of one copy
// (each its body, header fields, the values its Vary names and
// staleEntryOverhead for its key and bookkeeping).
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
// and origin as well as the host and scheme it used and the URL, so one
// client never sees another's response; responses that set cookies or may
// not be served stale (servableStale) are not kept, and neither are the
// fields that describe one response rather than its content. A copy whose
// response varies (Vary) by other request headers answers only the
// requests with the same values of them; Vary: * is not kept.
type staleCache struct {
	ttl   time.Duration
	clock func() time.Time
	// headers are the request headers that are part of the key; dropped
	// the response headers left out of a copy.
	headers, dropped []string

	// maxBytes bounds what all copies keep, and the copies of answers
	// still being written; maxEntry one copy (staleMaxBytes, staleMaxEntry).
	maxBytes, maxEntry int
	// copying is the bytes copied of answers still being written, at most
	// maxBytes together: past it an answer is not copied, nor kept.
	copying atomic.Int64

	mu      sync.Mutex
	entries map[[32]byte]*staleEntry
	// order holds the entries' keys, the oldest recorded at the front.
	order *list.List
	bytes int
}

type staleEntry struct {
	at     time.Time
	status int
	header http.Header
	body   []byte
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
// h varies by (its Vary), and false for Vary: *.
func varies(h http.Header, r *http.Request) (map[string]string, bool) {
	var out map[string]string
	for _, v := range h.Values("Vary") {
		for name := range strings.SplitSeq(v, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			switch name {
			case "":
			case "*":
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
// no control bytes, which end a line and a header here), the host and
// scheme the client used as the upstream is told them, host and URL.
func (c *staleCache) key(r *http.Request) [32]byte {
	var b strings.Builder
	for _, h := range c.headers {
		for _, v := range r.Header.Values(h) {
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	if r.TLS != nil {
		b.WriteString("https")
	}
	b.WriteByte(1)
	for _, h := range [...]string{"X-Forwarded-Host", "X-Forwarded-Proto"} {
		for _, v := range r.Header.Values(h) {
			b.WriteString(v)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	forwardedHostProto(&b, r.Header.Values("Forwarded"))
	b.WriteByte(1)
	b.WriteString(r.Host)
	b.WriteByte(0)
	b.WriteString(r.URL.RequestURI())
	return sha256.Sum256([]byte(b.String()))
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

// serve answers r, a GET or a HEAD, from the cache if it can: a HEAD with
// the header fields of the same GET's copy, without its body. A copy is
// served while its age is in [0, ttl].
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
	age := c.clock().Sub(e.at)
	if age < 0 || age > c.ttl { // a clock stepped back makes ages negative
		return false
	}
	h := w.Header()
	for k, v := range e.header {
		h[k] = v
	}
	h.Set("Age", strconv.Itoa(int(age/time.Second)))
	h.Set("Cache-Status", "sluice; hit; detail=stale-while-degraded")
	w.WriteHeader(e.status)
	if r.Method == http.MethodGet {
		w.Write(e.body)
	}
	return true
}

// servableStale reports whether a response of header h may be served
// stale, without asking its origin (RFC 9111, 4.2.4): none of its
// Cache-Control directives forbids keeping it (no-store, private) or
// serving it unvalidated (no-cache, must-revalidate, proxy-revalidate).
func servableStale(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for d := range strings.SplitSeq(v, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(name) {
			case "no-store", "private", "no-cache", "must-revalidate", "proxy-revalidate":
				return false
			}
		}
	}
	return true
}

// keepable reports whether an answer of status and header h may be kept:
// a 200 that sets no cookie, may be served stale and does not vary by
// everything (Vary: *).
func keepable(status int, h http.Header, r *http.Request) bool {
	if status != http.StatusOK || h.Get("Set-Cookie") != "" || !servableStale(h) {
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
	e := &staleEntry{at: c.clock(), status: tw.status, header: tw.Header().Clone(), body: tw.buf.Bytes(), vary: vary}
	for _, h := range c.dropped {
		e.header.Del(h) // per-response, not per-content
	}
	if e.size = entrySize(e); e.size > c.maxEntry {
		return
	}
	k := c.key(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.entries[k]; old != nil {
		c.drop(k, old)
	}
	c.entries[k] = e
	e.elem = c.order.PushBack(k)
	c.bytes += e.size
	// Drop, oldest first, what has aged out and what is over the budget.
	for f := c.order.Front(); f != nil && f != e.elem; f = c.order.Front() {
		fk := f.Value.([32]byte)
		fe := c.entries[fk]
		if c.bytes <= c.maxBytes && e.at.Sub(fe.at) <= c.ttl {
			break
		}
		c.drop(fk, fe)
	}
}

// drop removes the entry e of key k; called with mu held.
func (c *staleCache) drop(k [32]byte, e *staleEntry) {
	c.order.Remove(e.elem)
	delete(c.entries, k)
	c.bytes -= e.size
}

// teeWriter copies what it writes of an answer to r that c may keep, up to
// c.maxEntry bytes, counting them in c.copying until release. status is
// the final status written through it, 0 while there is none: an answer
// that switched protocols (written on the hijacked connection) or that was
// never written (its client left first) is not one to keep. skip says the
// answer is not copied: it may not be kept, or is too large for the bounds.
type teeWriter struct {
	http.ResponseWriter
	c      *staleCache
	r      *http.Request
	status int
	buf    bytes.Buffer
	skip   bool
	// counted is what the copy counts in c.copying.
	counted int64
}

// begin notes the answer's final status, and whether to copy it.
func (w *teeWriter) begin(code int) {
	w.status = code
	w.skip = !keepable(code, w.Header(), w.r)
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
// c.maxEntry or the answers being copied past c.maxBytes.
func (w *teeWriter) copy(p []byte) {
	if w.skip || len(p) == 0 {
		return
	}
	n := int64(len(p))
	if w.buf.Len()+len(p) <= w.c.maxEntry {
		if w.c.copying.Add(n) <= int64(w.c.maxBytes) {
			w.counted += n
			w.buf.Write(p)
			return
		}
		w.c.copying.Add(-n)
	}
	w.skip = true
	w.buf = bytes.Buffer{}
	w.release()
}

// release stops counting the copy in c.copying.
func (w *teeWriter) release() {
	w.c.copying.Add(-w.counted)
	w.counted = 0
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
