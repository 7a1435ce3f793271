package frameworks_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/labstack/echo/v4"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/memory"
)

// echo adapts func(http.Handler) http.Handler itself (echo.WrapMiddleware):
// here /bulk and /search are limited apart, each Middleware keeping its own
// state, so spending /bulk's quota leaves /search's whole.
func Example_echo() {
	limiter := sluice.NewLimiter(memory.New())
	perRoute := func(limit sluice.Limit) echo.MiddlewareFunc {
		mw, err := httplimit.New(limiter, httplimit.Options{
			Plans: []*httplimit.Plan{{Name: "all", Limits: []sluice.Limit{limit}}},
		})
		if err != nil {
			log.Fatal(err)
		}
		return echo.WrapMiddleware(mw.Handler)
	}
	e := echo.New()
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	e.POST("/bulk", ok, perRoute(sluice.PerMinute(1)))
	e.GET("/search", ok, perRoute(sluice.PerMinute(3)))

	for _, req := range []*http.Request{
		httptest.NewRequest("POST", "/bulk", nil),
		httptest.NewRequest("POST", "/bulk", nil),
		httptest.NewRequest("GET", "/search", nil),
	} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		fmt.Println(req.Method, req.URL.Path, w.Code)
	}
	// Output:
	// POST /bulk 200
	// POST /bulk 429
	// GET /search 200
}
