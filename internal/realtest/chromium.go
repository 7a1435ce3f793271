package realtest

import (
	"context"
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

// Browser starts Debian's Chromium headless and returns a chromedp context
// holding one tab of it: pass it (or a context with a timeout derived from
// it) to chromedp.Run and chromedp.Do. Chromium runs without sandbox (tests
// often run as root), GPU, QUIC or background networking, in a fresh user
// data directory of chromedp's own: chromedp kills the child processes still
// using it and removes it when the browser exits (it does neither for a
// directory the caller chose). The browser is closed, and chromedp's
// goroutines ended, when the test ends; what chromedp reported is logged if
// the test failed.
func Browser(tb testing.TB) context.Context {
	tb.Helper()
	bin := lookPath(tb, "chromium", "chromium")
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
	var log syncBuffer
	logf := func(format string, args ...any) {
		log.Write([]byte(strings.TrimSuffix(fmt.Sprintf(format, args...), "\n") + "\n"))
	}
	ctx, cancelTab := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logf))
	var once sync.Once
	closeBrowser := func() {
		once.Do(func() {
			cancelTab()
			cancelAlloc()
		})
	}
	tb.Cleanup(func() {
		closeBrowser()
		if tb.Failed() && log.String() != "" {
			tb.Logf("chromedp reported:\n%s", log.String())
		}
	})
	// The first Run starts the browser; it is bounded by a watchdog rather
	// than a deadline on ctx, which would bound the browser's whole life.
	watchdog := time.AfterFunc(browserStartTimeout, closeBrowser)
	err := chromedp.Do(ctx)
	if !watchdog.Stop() {
		tb.Fatalf("realtest: Chromium did not start within %v", browserStartTimeout)
	}
	if err != nil {
		tb.Fatalf("realtest: starting Chromium: %v", err)
	}
	return ctx
}
