package realtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browserStartTimeout bounds how long Chromium may take to start: longer
// than startTimeout, as make test runs -race test binaries of other
// packages on every core while it starts.
const browserStartTimeout = 60 * time.Second

// A Chromium is one headless Debian Chromium that the tests of a test
// binary share: it starts at the first Tab and runs until Close. Each Tab
// is a tab in a BrowserContext of its own, with its own cookies, storage
// and cache, as a fresh browser's would be. Chromium runs without sandbox
// (tests often run as root), GPU, QUIC or background networking, in a
// fresh user data directory of chromedp's own, which chromedp removes
// when the browser exits; the kernel ends the browser if the test binary
// dies first.
//
// The zero Chromium is ready to use. Its methods are safe for concurrent
// use. A test binary's TestMain calls Close after its tests have run.
type Chromium struct {
	once    sync.Once
	browser context.Context // the first tab's context, which holds the browser
	close   func()
	err     error // why the browser did not start
	log     Buffer
}

// Tab returns a chromedp context holding a new tab of c, started first if
// it is not running: pass it (or a context with a timeout derived from it)
// to chromedp.Run and chromedp.Do. The tab, and its BrowserContext, are
// closed when the test ends; what chromedp reported while the test ran is
// logged if it failed (with what other tests' tabs reported meanwhile).
func (c *Chromium) Tab(tb testing.TB) context.Context {
	tb.Helper()
	c.once.Do(func() { c.err = c.start(lookPath(tb, "chromium", "chromium")) })
	if c.browser == nil && c.err == nil {
		c.err = errors.New("the first test to start it failed first")
	}
	if c.err != nil {
		tb.Fatalf("realtest: starting Chromium: %v", c.err)
	}
	from := c.log.Len()
	ctx, cancel := chromedp.NewContext(c.browser, chromedp.WithNewBrowserContext())
	tb.Cleanup(func() {
		cancel()
		if tb.Failed() {
			if s := c.log.String()[from:]; s != "" {
				tb.Logf("chromedp reported:\n%s", s)
			}
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("realtest: opening a tab of Chromium: %v", err)
	}
	return ctx
}

// start starts the browser at bin, bounded by browserStartTimeout.
func (c *Chromium) start(bin string) error {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	logf := func(format string, args ...any) {
		c.log.Write([]byte(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n") + "\n"))
	}
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logf))
	var once sync.Once
	closeBrowser := func() {
		once.Do(func() {
			cancelTab()
			cancelAlloc()
		})
	}
	// The first Run starts the browser; it is bounded by a watchdog rather
	// than a deadline on ctx, which would bound the browser's whole life.
	watchdog := time.AfterFunc(browserStartTimeout, closeBrowser)
	err := chromedp.Do(ctx)
	if !watchdog.Stop() {
		return fmt.Errorf("it did not start within %v", browserStartTimeout)
	}
	if err != nil {
		closeBrowser()
		return err
	}
	c.browser, c.close = ctx, closeBrowser
	return nil
}

// Close ends the browser, if it started, and waits until it has exited
// and its user data directory is gone.
func (c *Chromium) Close() {
	c.once.Do(func() {}) // no start after Close
	if c.close != nil {
		c.close()
	}
}
