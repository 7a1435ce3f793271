package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluice-dev/sluice"
	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/envoy"
	"github.com/sluice-dev/sluice/httplimit"
	"github.com/sluice-dev/sluice/internal/algo"
)

// Bounds of the notifications (notify:): at most notifyQueue waiting to be
// posted (more are dropped and counted), notifySeen crossings remembered
// to be told once (the oldest forgotten first), each post given
// notifyTimeout, and notifyAttempts of them, a second apart and then two.
const (
	notifyQueue    = 1024
	notifySeen     = 1 << 16
	notifyTimeout  = 5 * time.Second
	notifyAttempts = 3
)

// Notification is what notify.url receives: a client has used At percent
// of a limit's quota (Quota units per Window) in the window that ends at
// ResetsAt. ID is the same for every instance that tells the same
// crossing (a receiver behind a fleet drops repeats by it).
type Notification struct {
	ID        string `json:"id"`
	Event     string `json:"event"` // "quota.used"
	Subject   string `json:"subject"`
	Key       string `json:"key,omitempty"` // the API key's configured name
	Plan      string `json:"plan,omitempty"`
	Domain    string `json:"domain,omitempty"` // the Envoy domain of a descriptor's limit
	Limit     string `json:"limit"`
	At        int    `json:"at"` // percent
	Used      int64  `json:"used"`
	Quota     int64  `json:"quota"`
	Window    string `json:"window"`
	ResetsAt  string `json:"resetsAt"`
	Time      string `json:"time"`
	Remaining int64  `json:"remaining"`
}

// notifyRules are a configuration's notify section, ready for the
// observer: nil without one.
type notifyRules struct {
	url    string
	secret []byte
	at     []int
	limits map[string]bool
}

func newNotifyRules(n config.Notify) *notifyRules {
	if n.URL == "" {
		return nil
	}
	r := &notifyRules{url: n.URL, secret: n.Secret, at: n.At, limits: map[string]bool{}}
	for _, l := range n.Limits {
		r.limits[l] = true
	}
	return r
}

// notifier posts notifications from one goroutine, started with the first
// and stopped by close, which first lets it send what is queued.
type notifier struct {
	client *http.Client
	sent   *prometheus.CounterVec // sluice_notifications_total{result}

	start    sync.Once
	queue    chan queued
	ctx      context.Context
	stop     context.CancelFunc
	done     chan struct{}
	closing  atomic.Bool   // close has begun: nothing more is queued
	draining chan struct{} // closed by close: the poster returns once the queue is empty
	closed   sync.Once
	left     atomic.Int64 // what close stopped the poster with, unsent

	mu   sync.Mutex
	seen map[string]bool
	ring []string // seen's keys, oldest first from head
	head int
}

type queued struct {
	n      Notification
	url    string
	secret []byte
}

func newNotifier(reg prometheus.Registerer) *notifier {
	nt := &notifier{
		// A redirect is not followed (a 3xx is no delivery): notify.url
		// names the receiver.
		client: &http.Client{Timeout: notifyTimeout, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}},
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_notifications_total",
			Help: "Notifications of quotas used (notify:), by result: sent (a 2xx), failed (no 2xx after every attempt), dropped (the queue was full, or a shutdown left it unsent).",
		}, []string{"result"}),
		seen:     map[string]bool{},
		ring:     make([]string, 0, notifySeen),
		draining: make(chan struct{}),
	}
	for _, r := range []string{"sent", "failed", "dropped"} {
		nt.sent.WithLabelValues(r)
	}
	reg.MustRegister(nt.sent)
	nt.ctx, nt.stop = context.WithCancel(context.Background())
	return nt
}

// observe tells, under rules, each share of a notified limit's quota that
// res's decision shows used and that was not told yet in its window. The
// limits of windows up to scaledUpTo (a degraded level's, 0 for none) are
// reduced ones, whose quota is not the one the client pays for: they are
// not judged, and a share used meanwhile is told at the client's next
// decision under the configured limits (their state is the same). Nor is
// a status no store decided (Unavailable: a failover's allow or deny
// while its store cannot be reached), nor a refusal for want of room
// (NoRoom: a memory store full of states it may not evict), whose
// Remaining tells no state; the caller leaves out the decisions its
// failover's local fallback may have made (see Server.fellBack).
func (nt *notifier) observe(rules *notifyRules, res *httplimit.Result, scaledUpTo time.Duration) {
	for i := range res.Checks {
		c := &res.Checks[i]
		st := &res.Decision.Statuses[i]
		if !rules.limits[c.Limit.Name()] || c.Limit.Algorithm() != sluice.AlgorithmFixedWindow || st.ResetAfter <= 0 ||
			c.Limit.Window() <= scaledUpTo || st.Unavailable || st.NoRoom {
			continue
		}
		n := Notification{Subject: c.Key[strings.IndexByte(c.Key, '/')+1:], // the key without the middleware's scope
			Limit: c.Limit.Name(), Quota: c.Limit.Quantity(), Remaining: st.Remaining, Window: httplimit.WindowOf(c.Limit)}
		if n.Subject == res.Identity.Subject {
			n.Key, n.Plan = res.Identity.KeyName, res.Identity.Plan.Name
		}
		nt.crossed(rules, n, res.Now, windowEnd(c.Limit, res.Now.Add(st.ResetAfter)))
	}
}

// windowEnd returns the end of the window of fixed-window limit l that a
// decision's ResetAfter points to, seen as seen (the decision's time plus
// ResetAfter): the boundary of l's windows nearest to seen — of its
// calendar for a calendar limit, else a multiple of its Window from
// sluice.Epoch, where a store's fixed windows start. The store reads its
// own clock (on Redis, another host's; the in-process store's, by
// default, one that is never set), so seen is the end shifted by the
// offset of this host's clock from the store's, which differs between the
// instances of a fleet and changes when this host's clock is set. While
// that offset stays below half the window (half the shortest period of a
// calendar limit: 14 days for a month), every instance names the same end,
// and so the same notification ID, for the same window.
func windowEnd(l sluice.Limit, seen time.Time) time.Time {
	t := algo.ClampTime(sluice.MicrosSinceEpoch(seen))
	if p := l.Period(); p != 0 {
		start, end := algo.CalendarWindow(algo.Period(p), int64(l.Offset()/time.Microsecond), t)
		if t-start < end-t {
			end = start
		}
		return sluice.TimeFromMicros(end)
	}
	w := int64(l.Window() / time.Microsecond)
	end := t + w/2
	end -= end % w
	if end > t+w/2 { // before Epoch: % rounds toward zero
		end -= w
	}
	return sluice.TimeFromMicros(end)
}

// observeEnvoy is observe for a decision of the Envoy service: its
// subject is the descriptor ("envoy:<domain>:<key>=<value>|…"), as
// envoySubjectText writes it.
func (nt *notifier) observeEnvoy(rules *notifyRules, res *envoy.Result) {
	for _, o := range res.Descriptors {
		if o.Subject == "" || !o.Fixed || !rules.limits[o.Limit] || o.ResetAfter <= 0 || o.Unavailable || o.NoRoom {
			continue
		}
		n := Notification{Subject: envoySubjectText(o.Subject), Domain: res.Domain, Limit: o.Limit, Quota: o.Capacity, Remaining: o.Remaining,
			Window: httplimit.FormatWindow(o.Window)}
		// ResetAfter is whole seconds from res.Now's Unix second, as
		// envoyproxy/ratelimit counts them.
		nt.crossed(rules, n, res.Now, res.Now.Truncate(time.Second).Add(o.ResetAfter))
	}
}

// envoySubjectText returns the Envoy subject s (envoy.Outcome.Subject)
// with each byte that is not part of UTF-8 written as '%' and its two
// upper-case hex digits, as s already writes '%' itself and the other
// bytes that shape its store key (':', '|', '=', '{', '}'): a descriptor's
// value may hold any byte (a header's obs-text), which JSON cannot carry
// (encoding/json writes U+FFFD for it), so two clients whose values differ
// only in such bytes would be told of one subject. Percent-decoding each
// domain, key and value of the text gives the descriptor's bytes back; a
// subject in UTF-8 is s itself.
func envoySubjectText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	const hexDigits = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, '%', hexDigits[s[i]>>4], hexDigits[s[i]&15])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// fallbackQuiet is how long after its failover last fell back on a node
// notify judges no decision of the node's keys, beyond the decision's own
// time: the observer runs a moment after the decision ends.
const fallbackQuiet = time.Second

// fellBack reports whether a decision of checks (all nodes for none) that
// took took may have been made by the failover's on_store_error rule
// rather than by the store: its figures are then of this instance's share
// of each limit (local) or of no state (allow, deny), not of the quota a
// client pays for. Notify leaves such decisions out, as it does a
// degraded level's limits: a share used meanwhile is told at the client's
// next decision by the store, which the local fallback's admissions are
// charged to. Without a failover no decision falls back.
func (s *Server) fellBack(checks []sluice.Check, took time.Duration) bool {
	return s.opts.Failover != nil && s.opts.Failover.FellBack(checks, took+fallbackQuiet)
}

// crossed queues, under rules, a notification of each share of n's quota
// used (Quota − Remaining) that was not told yet in the window that ends
// at end; now is the time of the decision, and n holds the subject, limit
// and figures.
func (nt *notifier) crossed(rules *notifyRules, n Notification, now, end time.Time) {
	q := n.Quota
	n.Used = q - min(n.Remaining, q)
	if n.Used <= 0 {
		return
	}
	n.Event, n.ResetsAt, n.Time = "quota.used", end.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)
	for _, at := range rules.at {
		if n.Used*100 < int64(at)*q {
			break
		}
		id := notificationID(&n, at, end)
		if !nt.first(id) {
			continue
		}
		n.ID, n.At = id, at
		nt.enqueue(queued{n: n, url: rules.url, secret: rules.secret})
	}
}

// notificationID names the crossing of share at of n's quota in the
// window that ends at end the same way on every instance: of the subject's
// limit under its plan (or domain) and quantity, so that a client moved to
// another plan or quota within the window (an upgrade, a reload, the
// decision API's plan override) is told its shares of the new one.
func notificationID(n *Notification, at int, end time.Time) string {
	sum := sha256.Sum256([]byte(n.Subject + "\x00" + n.Plan + "\x00" + n.Domain + "\x00" + n.Limit + "\x00" +
		strconv.FormatInt(n.Quota, 10) + "\x00" + strconv.Itoa(at) + "\x00" + strconv.FormatInt(end.Unix(), 10)))
	return hex.EncodeToString(sum[:16])
}

// first reports whether id is told for the first time, remembering it.
func (nt *notifier) first(id string) bool {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if nt.seen[id] {
		return false
	}
	if len(nt.ring) < notifySeen {
		nt.ring = append(nt.ring, id)
	} else {
		delete(nt.seen, nt.ring[nt.head])
		nt.ring[nt.head] = id
		nt.head = (nt.head + 1) % notifySeen
	}
	nt.seen[id] = true
	return true
}

// enqueue queues q for the poster, started with the first; a full queue
// drops q.
func (nt *notifier) enqueue(q queued) {
	nt.start.Do(func() {
		nt.queue, nt.done = make(chan queued, notifyQueue), make(chan struct{})
		go nt.post()
	})
	if nt.closing.Load() {
		return
	}
	select {
	case nt.queue <- q:
	default:
		nt.sent.WithLabelValues("dropped").Inc()
	}
}

// post sends the queued notifications until close: until the queue is
// empty once close has begun, or close stops it.
func (nt *notifier) post() {
	defer close(nt.done)
	for nt.ctx.Err() == nil {
		select {
		case <-nt.ctx.Done():
		case q := <-nt.queue:
			nt.post1(q)
		case <-nt.draining:
			for nt.ctx.Err() == nil {
				select {
				case q := <-nt.queue:
					nt.post1(q)
				default:
					return
				}
			}
		}
	}
}

// post1 delivers q and counts how it went: sent, failed, or — when close
// stopped the poster before q's attempts were over, q waiting or its post
// abandoned — left unsent (close counts it as dropped).
func (nt *notifier) post1(q queued) {
	if nt.ctx.Err() != nil {
		nt.left.Add(1)
		return
	}
	switch nt.deliver(q) {
	case delivered:
		nt.sent.WithLabelValues("sent").Inc()
	case undelivered:
		nt.sent.WithLabelValues("failed").Inc()
	default:
		nt.left.Add(1)
	}
}

// delivery is how deliver ended.
type delivery int

const (
	delivered   delivery = iota // a 2xx answered
	undelivered                 // no 2xx after notifyAttempts attempts
	abandoned                   // close stopped the poster first
)

// deliver posts q, trying notifyAttempts times, until a 2xx answers or
// close stops the poster.
func (nt *notifier) deliver(q queued) delivery {
	body, _ := json.Marshal(&q.n) // a Notification always marshals
	wait := time.Second
	for attempt := 1; ; attempt++ {
		if nt.send(q, body) {
			return delivered
		}
		if nt.ctx.Err() != nil { // close stopped the poster during the post
			return abandoned
		}
		if attempt == notifyAttempts {
			return undelivered
		}
		select {
		case <-nt.ctx.Done():
			return abandoned
		case <-time.After(wait):
			wait *= 2
		}
	}
}

func (nt *notifier) send(q queued, body []byte) bool {
	req, err := http.NewRequestWithContext(nt.ctx, http.MethodPost, q.url, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sluice")
	if q.secret != nil {
		mac := hmac.New(sha256.New, q.secret)
		mac.Write(body)
		req.Header.Set("Sluice-Signature", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	}
	resp, err := nt.client.Do(req)
	if err != nil {
		return false
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // a short answer read keeps the connection
	resp.Body.Close()
	return resp.StatusCode >= 200 && resp.StatusCode < 300
}

// close lets the poster send what is queued, for up to within (retries
// included), then stops it, abandoning a post under way, and returns how
// many notifications were left unsent (counted as dropped). From its start
// nothing more is queued, and after it no poster starts. Calls after the
// first return at once, with the first's count.
func (nt *notifier) close(within time.Duration) int {
	nt.closed.Do(func() {
		nt.closing.Store(true)
		nt.start.Do(func() {})
		if nt.done != nil {
			close(nt.draining)
			timer := time.NewTimer(within)
			select {
			case <-nt.done:
			case <-timer.C:
			}
			timer.Stop()
		}
		nt.stop()
		if nt.done != nil {
			<-nt.done
			nt.left.Add(int64(len(nt.queue)))
			nt.sent.WithLabelValues("dropped").Add(float64(nt.left.Load()))
		}
	})
	return int(nt.left.Load())
}
