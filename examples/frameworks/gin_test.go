package frameworks_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// Limit adapts an httplimit.Middleware to gin, as docs/middleware.md
// shows. Refused requests get the 429 and the chain stops; admitted ones go
// on with the RateLimit headers set, and a concurrency limit's slot is held
// until the rest of the chain has returned.
func Limit(mw *httplimit.Middleware) gin.HandlerFunc {
	return func(c *gin.Context) {
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

// gin with one route limited to one request in flight per client and 2 a
// minute: a second request while the first runs is refused; after it
// ends, the next is admitted, and the third is over the 2 a minute (a
// refused request spends nothing, so the inner ones do not count).
func Example_gin() {
	gin.SetMode(gin.ReleaseMode)
	limiter := sluice.NewLimiter(memory.New())
	mw, err := httplimit.New(limiter, httplimit.Options{
		Plans: []*httplimit.Plan{{Name: "all", Limits: []sluice.Limit{
			sluice.Concurrency(1, time.Minute), sluice.PerMinute(2),
		}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	var inner string
	r.GET("/report", Limit(mw), func(c *gin.Context) {
		// While this request holds the client's one slot, another is refused.
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest("GET", "/report", nil))
		inner = fmt.Sprint(w.Code)
		c.String(http.StatusOK, "done")
	})

	w := httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/report", nil))
	fmt.Println("outer", w.Code, "inner", inner)
	w = httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/report", nil))
	fmt.Println("next", w.Code, "inner", inner)
	w = httptest.NewRecorder()
	r.ServeHTTP(w, httptest.NewRequest("GET", "/report", nil))
	fmt.Println("third", w.Code, w.Header().Get("Content-Type"))
	// Output:
	// outer 200 inner 429
	// next 200 inner 429
	// third 429 application/problem+json
}
