package logsample

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// A Budget writes at most a given number of lines in each second of the
// wall clock, for lines that come with events a client can cause in any
// number (one per client it floods with): past the budget a line is only
// counted, and the next line written carries the count of those left out
// since the previous as "left_out" (omitted when 0). It keeps two counts,
// whatever the number of lines. The zero Budget is ready to use. A Budget
// is safe for concurrent use and must not be copied after first use.
type Budget struct {
	mu      sync.Mutex
	second  int64            // Unix second of written
	written int              // lines written in second
	leftOut int64            // lines not written since the last one written
	now     func() time.Time // nil: time.Now
}

// Info writes msg with args to log at the info level, unless perSecond
// lines went out in the current second already (or perSecond is not
// positive): then it only counts this one.
func (b *Budget) Info(ctx context.Context, log *slog.Logger, perSecond int, msg string, args ...any) {
	now := time.Now
	if b.now != nil {
		now = b.now
	}
	sec := now().Unix()
	b.mu.Lock()
	if sec != b.second {
		b.second, b.written = sec, 0
	}
	if b.written >= perSecond {
		b.leftOut++
		b.mu.Unlock()
		return
	}
	b.written++
	leftOut := b.leftOut
	b.leftOut = 0
	b.mu.Unlock()
	if leftOut > 0 {
		args = append(args, "left_out", leftOut)
	}
	log.InfoContext(ctx, msg, args...)
}
