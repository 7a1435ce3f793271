package server

import (
	"log"
	"log/slog"
	"strings"
	"time"
)

// serverErrorsPerSecond bounds the lines the HTTP servers log of their
// own errors, all listeners together.
const serverErrorsPerSecond = 10

// serverErrorLog receives the lines of the HTTP servers' ErrorLog (a
// failed TLS handshake, a handler's panic), each logged at Warn within
// serverErrorsPerSecond: most come of a connection, which a stranger
// opens at will. The lines left out are counted until flush says how
// many. It is safe for concurrent use.
type serverErrorLog struct {
	log    *slog.Logger
	budget refusalLog
}

// logger returns the log.Logger an http.Server's ErrorLog is.
func (e *serverErrorLog) logger() *log.Logger { return log.New(e, "", 0) }

// Write logs the line p, if it fits in the second's budget.
func (e *serverErrorLog) Write(p []byte) (int, error) {
	if e.budget.take(serverErrorsPerSecond, time.Now()) {
		e.log.Warn(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// flush logs how many lines were left out since the last summary, if any,
// at most once a second.
func (e *serverErrorLog) flush() {
	if left := e.budget.summary(time.Now()); left > 0 {
		e.log.Warn("server errors not logged", "count", left, "per_second", serverErrorsPerSecond)
	}
}
