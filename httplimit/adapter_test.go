package httplimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// ginContext stands in for *gin.Context: a chain of handlers that Next runs
// on from the current one and Abort stops, with the request and the writer.
type ginContext struct {
	Writer   http.ResponseWriter
	Request  *http.Request
	handlers []func(*ginContext)
	index    int
}

func (c *ginContext) Next() {
	for c.index++; c.index < len(c.handlers); c.index++ {
		c.handlers[c.index](c)
	}
}

func (c *ginContext) Abort() { c.index = len(c.handlers) }

func (c *ginContext) run() { c.index = -1; c.Next() }

// ginLimit is docs/middleware.md's gin adapter with *gin.Context replaced by
// its stand-in: the rest is the same text.
func ginLimit(mw *httplimit.Middleware) func(*ginContext) {
	return func(c *ginContext) {
		admitted := false
		mw.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			admitted = true
			c.Request = r
			c.Next() // the rest of the chain runs inside: leases end after it
		})).ServeHTTP(c.Writer, c.Request)
		if !admitted {
			c.Abort()
		}
	}
}

// The adapter runs the rest of the chain for admitted requests, with the
// RateLimit headers set, and stops it with the 429 written for refused ones;
// a concurrency slot is held until the chain has ended.
func TestGinStyleAdapter(t *testing.T) {
	mw, err := httplimit.New(sluice.NewLimiter(memory.New()), httplimit.Options{
		Scope: "gin",
		Plans: []*sluice.Plan{{Name: "free", Limits: []sluice.Limit{sluice.PerMinute(2), sluice.Concurrency(1, time.Minute)}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	limit := ginLimit(mw)
	var reached, after int
	inner := func(c *ginContext) {
		reached++
		c.Writer.WriteHeader(200)
		// The slot is held while the handler runs: a second request now
		// is refused by the concurrency limit.
		if reached == 1 {
			w := httptest.NewRecorder()
			(&ginContext{Writer: w, Request: httptest.NewRequest("GET", "/", nil), handlers: []func(*ginContext){limit, func(*ginContext) { t.Error("a second concurrent request ran") }}}).run()
			if w.Code != 429 {
				t.Errorf("concurrent request: %d, want 429", w.Code)
			}
		}
	}
	for i, want := range []int{200, 200, 429} {
		w := httptest.NewRecorder()
		c := &ginContext{Writer: w, Request: httptest.NewRequest("GET", "/", nil),
			handlers: []func(*ginContext){limit, inner, func(*ginContext) { after++ }}}
		c.run()
		if w.Code != want {
			t.Errorf("request %d: %d, want %d", i+1, w.Code, want)
		}
		if w.Header().Get("RateLimit") == "" {
			t.Errorf("request %d: no RateLimit header", i+1)
		}
	}
	if reached != 2 || after != 2 {
		t.Errorf("the chain ran on %d and to its end %d times, want 2 and 2", reached, after)
	}
}
