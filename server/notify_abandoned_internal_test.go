package server

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A notification whose post is under way when close's time runs out (a
// receiver that does not answer) is abandoned after one attempt: it is
// left unsent, as one still queued is — close reports it among those not
// sent and counts it as dropped — not failed, which means no 2xx after
// every attempt (docs/operations.md, Notifications).
func TestNotifyPostAbandonedAtShutdownIsDroppedNotFailed(t *testing.T) {
	arrived := make(chan struct{}, 4)
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	defer close(release)

	nt := newNotifier(prometheus.NewRegistry())
	defer nt.client.CloseIdleConnections()
	nt.enqueue(queued{n: Notification{ID: "a", Event: "quota.used"}, url: hook.URL})
	<-arrived // the first post is under way
	nt.enqueue(queued{n: Notification{ID: "b", Event: "quota.used"}, url: hook.URL})

	left := nt.close(100 * time.Millisecond)
	dropped, failed := notifyCount(nt.sent.WithLabelValues("dropped")), notifyCount(nt.sent.WithLabelValues("failed"))
	if left != 2 || dropped != 2 || failed != 0 {
		t.Errorf("one post abandoned after 1 attempt and one queued at shutdown: close reported %d not sent, dropped=%v failed=%v; want 2, 2 and 0",
			left, dropped, failed)
	}
}

func notifyCount(c prometheus.Counter) float64 {
	var m dto.Metric
	c.Write(&m)
	return m.GetCounter().GetValue()
}
