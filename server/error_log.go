package server

import (
	"bytes"
	"log"
	"log/slog"
	"slices"
	"time"
)

// warningsPerSecond bounds the lines each boundedWarnings of the server
// logs: those of the HTTP servers' own errors, all listeners together, and
// those of requests the upstream failed.
const warningsPerSecond = 10

// maxLoggedLine bounds, in bytes, each line of a log.Logger's that a
// boundedWarnings logs (see logger and loggerAs): such a line may repeat
// what a client sent (the protocols its TLS ClientHello offered), which is
// cut as the refusal log cuts a request's path.
const maxLoggedLine = 1024

// boundedWarnings logs lines at Warn, at most perSecond a second by the
// wall clock: lines that come of what anyone may do (open a connection,
// send a request), so that doing it fast cannot flood the log. The lines
// left out are counted until flush says how many, in a line of message
// leftOut. It is safe for concurrent use.
type boundedWarnings struct {
	log       *slog.Logger
	perSecond int
	leftOut   string
	budget    refusalLog
}

func newBoundedWarnings(log *slog.Logger, leftOut string) *boundedWarnings {
	return &boundedWarnings{log: log, perSecond: warningsPerSecond, leftOut: leftOut}
}

// warn logs msg with args at Warn, if it fits in the second's budget.
func (b *boundedWarnings) warn(msg string, args ...any) {
	if b.budget.take(b.perSecond, time.Now()) {
		b.log.Warn(msg, args...)
	}
}

// Write warns of p, one line of a log.Logger's (see logger), cut to
// maxLoggedLine bytes.
func (b *boundedWarnings) Write(p []byte) (int, error) {
	b.warn(logLine(p))
	return len(p), nil
}

// logLine returns p, one line of a log.Logger's, without its newline and
// cut to maxLoggedLine bytes.
func logLine(p []byte) string {
	p = bytes.TrimSuffix(p, []byte("\n"))
	return cutText(string(p[:min(len(p), maxLoggedLine+1)]), maxLoggedLine)
}

// logger returns a log.Logger whose lines b warns of: an http.Server's
// ErrorLog.
func (b *boundedWarnings) logger() *log.Logger { return log.New(b, "", 0) }

// loggerAs returns a log.Logger whose lines b warns of as msg with args,
// each line as the "err": the ErrorLog of a component whose lines belong
// with msg's (the reverse proxy's, with "upstream failed").
func (b *boundedWarnings) loggerAs(msg string, args ...any) *log.Logger {
	return log.New(linesAs{b: b, msg: msg, args: args}, "", 0)
}

// linesAs warns of each line written to it as msg with args and the line,
// cut to maxLoggedLine bytes.
type linesAs struct {
	b    *boundedWarnings
	msg  string
	args []any
}

func (l linesAs) Write(p []byte) (int, error) {
	l.b.warn(l.msg, append(slices.Clip(l.args), "err", logLine(p))...)
	return len(p), nil
}

// flush logs how many lines were left out since the last summary, if any,
// at most once a second.
func (b *boundedWarnings) flush() {
	if left := b.budget.summary(time.Now(), false); left > 0 {
		b.log.Warn(b.leftOut, "count", left, "per_second", b.perSecond)
	}
}

// flushLast is flush however recent the last summary is, for the last one.
func (b *boundedWarnings) flushLast() {
	if left := b.budget.summary(time.Now(), true); left > 0 {
		b.log.Warn(b.leftOut, "count", left, "per_second", b.perSecond)
	}
}
