// Package logsample writes warnings that would otherwise repeat for every
// request — a store that cannot be reached fails each one — at most once
// per Interval for each message, each line counting the ones left out
// since the previous, so that an outage under load writes a line every few
// seconds and not one per request.
package logsample

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Interval is the least time between two lines of one message.
const Interval = 10 * time.Second

// A Log writes each of its messages at most once per Interval. Its
// messages are meant to be few, constants of the caller's code: it keeps
// the time of the last line and a count for each message it has written.
// The zero Log is ready to use. A Log is safe for concurrent use and must
// not be copied after first use.
type Log struct {
	mu    sync.Mutex
	lines map[string]*line
	now   func() time.Time // nil: time.Now
}

// line is what a Log knows of one message.
type line struct {
	at      time.Time // when it was last written
	leftOut int64     // warnings of it not written since
}

// Warn writes msg with args to log at the warning level, unless a line of
// msg went out less than Interval ago: then it only counts this one, and
// the next line of msg carries the count as "left_out" (omitted when 0).
func (l *Log) Warn(ctx context.Context, log *slog.Logger, msg string, args ...any) {
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	t := now()
	l.mu.Lock()
	ln := l.lines[msg]
	if ln != nil && t.Sub(ln.at) < Interval {
		ln.leftOut++
		l.mu.Unlock()
		return
	}
	if ln == nil {
		if l.lines == nil {
			l.lines = map[string]*line{}
		}
		ln = &line{}
		l.lines[msg] = ln
	}
	leftOut := ln.leftOut
	ln.at, ln.leftOut = t, 0
	l.mu.Unlock()
	if leftOut > 0 {
		args = append(args, "left_out", leftOut)
	}
	log.WarnContext(ctx, msg, args...)
}
