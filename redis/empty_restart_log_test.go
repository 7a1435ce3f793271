package redis_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-dev/sluice/failover"
	"github.com/sluice-dev/sluice/internal/redistest"
	"github.com/sluice-dev/sluice/redis"
)

type auditS48iLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *auditS48iLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *auditS48iLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.buf.String() }

// A master back at its address without its data is logged at error level,
// as lost writes and evictions are (doc.go, Failover): an operator alerting
// on the store's error-level lines sees it.
func TestAnEmptyRestartIsLoggedAtErrorLevel(t *testing.T) {
	srv := redistest.Standalone(t)
	var logs auditS48iLog
	g, err := redis.Open(context.Background(), redis.Options{Addrs: []string{srv.Addr}, Timeout: testTimeout,
		OnStoreError: failover.Local, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv.Restart()
	// Counted before it is logged: wait for the line.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), "restarted without its data"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the restart not logged within 10 s: %+v\n%s", g.Losses(), logs.String())
		}
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "restarted without its data") {
			if !strings.Contains(line, "level=ERROR") {
				t.Errorf("the empty restart logged as %q; want level=ERROR", line)
			}
			return
		}
	}
	t.Errorf("no log line of the empty restart:\n%s", logs.String())
}
