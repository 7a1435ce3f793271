package jwt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice/internal/redact"
)

var (
	// errClosed: the Verifier was closed, and fetches no more.
	errClosed = errors.New("jwt: Verifier closed")
	// errTooSoon: a token prompted a fetch less than MinRefresh after the
	// last one began.
	errTooSoon = errors.New("the set was fetched less than MinRefresh ago")
)

// A fetcher keeps a Verifier's set of keys as KeysURL serves it: one
// goroutine fetches it every refresh (sooner after a failure), and tokens
// the set has no key for prompt one more fetch, at most once every
// minRefresh, which every caller that needs it then waits for.
type fetcher struct {
	// url is the JWK Set's, or with discovered the issuer's discovery
	// document's, which names the set's.
	url        string
	shown      string // url as logged: its password, if any, redacted
	discovered bool
	issuer     string // with discovered: the "issuer" the document must name
	client     *http.Client
	transport  *http.Transport // the client's own, closed by close; nil when Options.Client dials its own way
	refresh    time.Duration
	minRefresh time.Duration
	log        *slog.Logger
	onFetch    func(keys int, err error)
	now        func() time.Time // paces the fetches tokens prompt
	set        *atomic.Pointer[keySet]

	ctx    context.Context // canceled by close: every fetch stops
	cancel context.CancelFunc
	wg     sync.WaitGroup // the loop and every fetch running

	mu       sync.Mutex
	closed   bool
	last     time.Time // when the latest fetch began; zero: none has
	latest   *fetch    // the latest fetch begun, while it runs
	numbered uint64    // fetches begun

	installMu sync.Mutex
	installed uint64 // the number of the fetch whose set is in use
}

// A fetch is one GET of the set.
type fetch struct {
	n    uint64
	done chan struct{} // closed when err is set
	err  error
}

// start begins the first fetch and the goroutine that fetches again every
// refresh.
func (f *fetcher) start() {
	f.mu.Lock()
	first := f.beginLocked()
	f.wg.Add(1)
	f.mu.Unlock()
	go f.loop(first)
}

// loop waits for c, then for refresh (after a success) or the backoff
// (after a failure), begins the next fetch, and so on until close.
func (f *fetcher) loop(c *fetch) {
	defer f.wg.Done()
	ceiling := min(f.refresh, maxBackoff)
	backoff := min(firstBackoff, ceiling)
	for c != nil {
		select {
		case <-c.done:
		case <-f.ctx.Done():
			return
		}
		wait := f.refresh
		if c.err != nil {
			wait, backoff = backoff, min(2*backoff, ceiling)
		} else {
			backoff = min(firstBackoff, ceiling)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-f.ctx.Done():
			t.Stop()
			return
		}
		f.mu.Lock()
		c = f.beginLocked()
		f.mu.Unlock()
	}
}

// fetchNow fetches the set, whatever fetch runs already, and waits for it or
// for ctx.
func (f *fetcher) fetchNow(ctx context.Context) error {
	f.mu.Lock()
	c := f.beginLocked()
	f.mu.Unlock()
	return f.wait(ctx, c)
}

// prompted is a fetch that a token the set has no key for asks for: it
// waits for the fetch running, if any, else begins one unless one began
// less than minRefresh ago (errTooSoon). Every caller waits for the same
// fetch, or for ctx.
func (f *fetcher) prompted(ctx context.Context) error {
	f.mu.Lock()
	c := f.latest
	if c == nil {
		if !f.last.IsZero() && f.now().Sub(f.last) < f.minRefresh {
			f.mu.Unlock()
			return errTooSoon
		}
		c = f.beginLocked()
	}
	f.mu.Unlock()
	return f.wait(ctx, c)
}

// wait returns c's error once it is done, or ctx's first. A nil c is a
// fetch refused because the fetcher is closed.
func (f *fetcher) wait(ctx context.Context, c *fetch) error {
	if c == nil {
		return errClosed
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// beginLocked starts a fetch in a goroutine of its own and returns it, or
// nil once closed. f.mu must be held.
func (f *fetcher) beginLocked() *fetch {
	if f.closed {
		return nil
	}
	f.numbered++
	c := &fetch{n: f.numbered, done: make(chan struct{})}
	f.latest = c
	f.last = f.now()
	f.wg.Add(1)
	go f.run(c)
	return c
}

// run fetches for c and says so to c's waiters.
func (f *fetcher) run(c *fetch) {
	defer f.wg.Done()
	c.err = f.fetchAndInstall(c.n)
	f.mu.Lock()
	if f.latest == c {
		f.latest = nil
	}
	f.mu.Unlock()
	close(c.done)
}

// fetchAndInstall fetches the set and, unless a fetch begun later has
// replaced the set already, puts it in use; then it reports the fetch.
// A failed fetch leaves the set as it was.
func (f *fetcher) fetchAndInstall(n uint64) error {
	set, err := f.get()
	if err != nil {
		err = fmt.Errorf("jwt: fetching KeysURL: %w", err)
		if f.ctx.Err() != nil {
			return err // cut short by close: not reported
		}
	}
	f.installMu.Lock()
	if err == nil && n > f.installed {
		f.installed = n
		f.set.Store(set)
	}
	keys := f.set.Load().len()
	f.installMu.Unlock()
	if err != nil {
		f.log.Warn("jwt: the JWK Set could not be fetched; the keys in use stay", "url", f.shown, "keys", keys, "err", err)
	}
	if f.onFetch != nil {
		f.onFetch(keys, err)
	}
	return err
}

// get GETs the set — after the discovery document that names it, with
// discovered — and reads its usable keys.
func (f *fetcher) get() (*keySet, error) {
	ctx, cancel := context.WithTimeout(f.ctx, maxFetchTime)
	defer cancel()
	setURL := f.url
	if f.discovered {
		doc, err := f.getBody(ctx, f.url, maxDiscoveryLen)
		if err != nil {
			return nil, fmt.Errorf("the discovery document: %w", err)
		}
		if setURL, err = keysOfDiscovery(doc, f.url, f.issuer); err != nil {
			return nil, fmt.Errorf("the discovery document: %w", err)
		}
	}
	body, err := f.getBody(ctx, setURL, maxSetLen)
	if err != nil {
		return nil, err
	}
	return parseSet(body)
}

// getBody GETs u and returns the body of its 200, of at most limit bytes.
// Its error names u as redact.URL shows it.
func (f *fetcher) getBody(ctx context.Context, u string, limit int) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.client.Do(req)
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		ue.URL = redact.URL(ue.URL) // net/http names the URL with its query
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s, not 200", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading the body: %w", err)
	}
	if len(body) > limit {
		return nil, fmt.Errorf("body longer than %d bytes", limit)
	}
	return body, nil
}

// keysOfDiscovery returns the "jwks_uri" of an OpenID Connect discovery
// document (OpenID Connect Discovery 1.0, section 3), read from docURL,
// whose "issuer" must be issuer, and which must be a URL a JWK Set may be
// fetched from after docURL (checkHop).
func keysOfDiscovery(doc []byte, docURL, issuer string) (string, error) {
	var d struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return "", err
	}
	switch {
	case d.Issuer != issuer:
		return "", fmt.Errorf("it names issuer %.200q, not %q", redact.URL(d.Issuer), redact.URL(issuer))
	case d.JWKSURI == "":
		return "", errors.New("it names no jwks_uri")
	}
	from, err := url.Parse(docURL)
	if err != nil {
		return "", err
	}
	to, err := url.Parse(d.JWKSURI)
	if err != nil {
		return "", fmt.Errorf("jwks_uri: %w", err)
	}
	if err := checkHop(from, to); err != nil {
		return "", fmt.Errorf("jwks_uri: %w", err)
	}
	return d.JWKSURI, nil
}

// close stops the loop and every fetch, and waits for them.
func (f *fetcher) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	if f.transport != nil {
		f.transport.CloseIdleConnections()
	}
}

// newClient returns the client that fetches the set: a copy of c (a
// client of its own, with its transport, when c is nil) that follows
// redirects only to URLs KeysURL could be, never from https:// to
// http://, nor to a loopback host from another (checkHop). When it makes
// its connections as http.DefaultTransport does (dialsByDefault), it
// makes them with a clone of its transport, returned, whose connections g
// makes.
func newClient(c *http.Client, g *dialGuard) (*http.Client, *http.Transport) {
	var own *http.Transport
	if c == nil {
		c = &http.Client{Timeout: defaultTimeout}
		if own = dialsByDefault(nil); own == nil {
			own = &http.Transport{Proxy: http.ProxyFromEnvironment}
		}
	} else {
		cp := *c
		c = &cp
		own = dialsByDefault(c.Transport)
	}
	if own != nil {
		own = own.Clone()
		g.guard(own)
		c.Transport = own
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := checkHop(via[len(via)-1].URL, req.URL); err != nil {
			return fmt.Errorf("redirected: %w", err)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	return c, own
}
