package envoyparity

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/sluice-dev/sluice/internal/redistest"
)

// rig is the three services on one Redis and one rules folder.
type rig struct {
	t          *testing.T
	sluice     *service
	stop, dflt *service // envoyproxy/ratelimit: STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT, default
	configDir  string   // the rules folder all three load
	runtime    string   // envoyproxy/ratelimit's runtime/current/ratelimit
	module     string   // envoyproxy/ratelimit's source
	// uncharged holds the descriptors that sluice's all-or-nothing rule
	// kept from being charged in a refused request (domain and entries).
	uncharged  map[string]bool
	calls      int // calls compared
	documented int // of which sluice's answer differed by a documented difference
	agreeDflt  int // of which the default envoyproxy/ratelimit gave the same answer
}

func newRig(t *testing.T) *rig {
	ratelimitBin, sluiceBin, module := programs(t)
	rs := redistest.Standalone(t)
	root := t.TempDir()
	r := &rig{t: t, module: module, runtime: filepath.Join(root, "current", "ratelimit"), uncharged: map[string]bool{}}
	r.configDir = filepath.Join(r.runtime, "config")
	if err := os.MkdirAll(r.configDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// envoyproxy/ratelimit's integration rules, its example folder, and the
	// rules of the scenarios the differences were found with.
	integration := filepath.Join(module, "test", "integration", "runtime", "current", "ratelimit")
	for _, f := range []string{"config/basic.yaml", "config/another.yaml"} {
		copyFile(t, filepath.Join(integration, f), filepath.Join(r.configDir, filepath.Base(f)))
	}
	// A file of another name in a subfolder, which both read, and a
	// folder whose name starts with ".", which neither reads (both skip
	// such names, envoyproxy/ratelimit with RUNTIME_IGNOREDOTFILES): read,
	// its copy of a domain would be defined twice.
	for _, d := range []string{"teams", "..2026_01_01"} {
		if err := os.Mkdir(filepath.Join(r.configDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(integration, "config", "share_threshold.yaml"), filepath.Join(r.configDir, d, "share_threshold"))
	}
	copyFile(t, filepath.Join(integration, "reload.yaml"), filepath.Join(r.runtime, "reload.yaml"))
	for _, f := range []string{"example.yaml", "config.yaml"} {
		copyFile(t, filepath.Join(module, "examples", "ratelimit", "config", f), filepath.Join(r.configDir, f))
	}
	copyFile(t, filepath.Join("testdata", "parity.yaml"), filepath.Join(r.configDir, "parity.yaml"))
	// A link to nothing, which both skip with a warning.
	if err := os.Symlink(filepath.Join(root, "removed.yaml"), filepath.Join(r.configDir, "removed.yaml")); err != nil {
		t.Fatal(err)
	}

	r.sluice = startSluice(t, sluiceBin, r.configDir, rs.Addr)
	r.stop = startRatelimit(t, ratelimitBin, filepath.Join(root, "current"), rs.Addr, "stop:", "STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT=true",
		"LIMIT_RESPONSE_HEADERS_ENABLED=true", "LIMIT_LIMIT_HEADER="+limitHeader, "LIMIT_REMAINING_HEADER="+remainingHeader,
		"LIMIT_RESET_HEADER="+resetHeader)
	r.dflt = startRatelimit(t, ratelimitBin, filepath.Join(root, "current"), rs.Addr, "default:")
	return r
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// req builds a request of domain with hits_addend hits (0: unset) and
// descriptors given as "key=value,key=value".
func req(domain string, hits uint32, descriptors ...string) *rlsv3.RateLimitRequest {
	r := &rlsv3.RateLimitRequest{Domain: domain, HitsAddend: hits}
	for _, d := range descriptors {
		desc := &ratelimitv3.RateLimitDescriptor{}
		for kv := range strings.SplitSeq(d, ",") {
			k, v, _ := strings.Cut(kv, "=")
			desc.Entries = append(desc.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: k, Value: v})
		}
		r.Descriptors = append(r.Descriptors, desc)
	}
	return r
}

// descriptorHits sets the first descriptor's own hits_addend.
func descriptorHits(r *rlsv3.RateLimitRequest, n uint64) *rlsv3.RateLimitRequest {
	r.Descriptors[0].HitsAddend = wrapperspb.UInt64(n)
	return r
}

// answer is a response in comparable form: the overall code and, per
// status, its code, current limit, remaining and duration_until_reset in
// whole seconds (-1: none).
type answer struct {
	overall  rlsv3.RateLimitResponse_Code
	statuses []statusAnswer
	// limit, remaining and reset are the RateLimit-Limit,
	// RateLimit-Remaining and RateLimit-Reset headers, renamed as
	// limitHeader, remainingHeader and resetHeader ("" when absent):
	// envoyproxy/ratelimit's with LIMIT_RESPONSE_HEADERS_ENABLED and
	// LIMIT_LIMIT_HEADER and its kin, sluice's with headers: draft-6 and
	// limit_header and its kin.
	limit, remaining, reset string
}

// The names both services give the draft-6 headers.
const (
	limitHeader     = "X-RateLimit-Limit"
	remainingHeader = "X-RateLimit-Remaining"
	resetHeader     = "X-RateLimit-Reset"
)

type statusAnswer struct {
	code      rlsv3.RateLimitResponse_Code
	limit     string // "name:requests/UNIT", "" for none
	remaining uint32
	reset     int64
}

func answerOf(resp *rlsv3.RateLimitResponse) answer {
	a := answer{overall: resp.GetOverallCode()}
	for _, st := range resp.GetStatuses() {
		s := statusAnswer{code: st.GetCode(), remaining: st.GetLimitRemaining(), reset: -1}
		if cl := st.GetCurrentLimit(); cl != nil {
			s.limit = cl.GetName() + ":" + strconv.FormatUint(uint64(cl.GetRequestsPerUnit()), 10) + "/" + cl.GetUnit().String()
		}
		if d := st.GetDurationUntilReset(); d != nil {
			s.reset = d.GetSeconds()
			if d.GetNanos() != 0 {
				s.reset = -2 // envoyproxy/ratelimit's are whole seconds
			}
		}
		a.statuses = append(a.statuses, s)
	}
	for _, h := range resp.GetResponseHeadersToAdd() {
		switch h.GetKey() {
		case limitHeader:
			a.limit = h.GetValue()
		case remainingHeader:
			a.remaining = h.GetValue()
		case resetHeader:
			a.reset = h.GetValue()
		}
	}
	return a
}

func (a answer) String() string {
	var b strings.Builder
	b.WriteString(a.overall.String())
	for _, s := range a.statuses {
		fmt.Fprintf(&b, " [%v %s r=%d t=%d]", s.code, s.limit, s.remaining, s.reset)
	}
	if a.limit != "" || a.remaining != "" || a.reset != "" {
		fmt.Fprintf(&b, " RateLimit-Limit: %s, -Remaining: %s, -Reset: %s", a.limit, a.remaining, a.reset)
	}
	return b.String()
}

// same reports whether a and b agree; durations may differ by one second
// when the Unix second changed while the services were asked (ticked).
func same(a, b answer, ticked bool) bool {
	if a.overall != b.overall || len(a.statuses) != len(b.statuses) {
		return false
	}
	for i := range a.statuses {
		if !sameStatus(a.statuses[i], b.statuses[i], ticked) {
			return false
		}
	}
	return true
}

// sameHeaders reports whether a and b carry the same RateLimit-Limit,
// -Remaining and -Reset headers, the reset one second apart if the second
// turned between the calls (ticked).
func sameHeaders(a, b answer, ticked bool) bool {
	if a.limit != b.limit || a.remaining != b.remaining {
		return false
	}
	x, errX := strconv.ParseInt(a.reset, 10, 64)
	y, errY := strconv.ParseInt(b.reset, 10, 64)
	if errX != nil || errY != nil {
		return a.reset == b.reset
	}
	return x == y || ticked && (x-y == 1 || y-x == 1)
}

// sameStatus reports whether two descriptor statuses agree: the same code,
// limit and remainder, and the same duration until reset, or one second
// apart if the second turned between the calls (ticked).
func sameStatus(x, y statusAnswer, ticked bool) bool {
	d := x.reset - y.reset
	return x.code == y.code && x.limit == y.limit && x.remaining == y.remaining &&
		(d == 0 || ticked && (d == 1 || d == -1) && x.reset > 0 && y.reset > 0)
}

// call is one request of a scenario.
type call struct {
	label string
	req   *rlsv3.RateLimitRequest
	// asDefault marks the documented difference in which sluice answers as
	// the default envoyproxy/ratelimit does, not as the one with
	// STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT.
	asDefault bool
}

// ask sends c to the three services and compares their answers: sluice's
// must equal envoyproxy/ratelimit's with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT,
// and may differ from the default one's only in statuses of descriptors
// that the all-or-nothing rule kept from being charged. It returns
// sluice's answer.
func (r *rig) ask(c call) answer {
	r.t.Helper()
	before := time.Now().Unix()
	sl := answerOf(r.sluice.ask(r.t, c.req))
	stop := answerOf(r.stop.ask(r.t, c.req))
	dflt := answerOf(r.dflt.ask(r.t, c.req))
	ticked := time.Now().Unix() != before
	r.calls++
	switch {
	case same(sl, stop, ticked) && sameHeaders(sl, stop, ticked):
	case c.asDefault && same(sl, dflt, ticked):
		r.documented++
		r.t.Logf("%s: the documented difference: sluice and the default envoyproxy/ratelimit %v, with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT %v",
			c.label, sl, stop)
	default:
		r.t.Errorf("%s: sluice answered\n\t%v\nenvoyproxy/ratelimit (stop increment when over limit) answered\n\t%v", c.label, sl, stop)
	}
	if same(sl, dflt, ticked) {
		r.agreeDflt++
	} else {
		for i := range sl.statuses {
			if i < len(dflt.statuses) && !sameStatus(sl.statuses[i], dflt.statuses[i], ticked) && !r.uncharged[r.descriptorKey(c.req, i)] &&
				!(sl.overall == rlsv3.RateLimitResponse_OVER_LIMIT && sl.statuses[i].code == rlsv3.RateLimitResponse_OK) {
				r.t.Errorf("%s: status %d differs from the default envoyproxy/ratelimit's where the all-or-nothing rule does not apply:\n\tsluice  %v\n\tdefault %v",
					c.label, i, sl, dflt)
			}
		}
	}
	if sl.overall == rlsv3.RateLimitResponse_OVER_LIMIT {
		for i, s := range sl.statuses {
			if s.code == rlsv3.RateLimitResponse_OK && s.limit != "" {
				r.uncharged[r.descriptorKey(c.req, i)] = true
			}
		}
	}
	return sl
}

func (r *rig) descriptorKey(req *rlsv3.RateLimitRequest, i int) string {
	var b strings.Builder
	b.WriteString(req.GetDomain())
	for _, e := range req.GetDescriptors()[i].GetEntries() {
		b.WriteString("|" + e.GetKey() + "=" + e.GetValue())
	}
	return b.String()
}

// awayFromBoundary waits, if the current minute has less than 15 s left,
// for the next one, so that a scenario's minute, hour, day and week
// windows do not end in the middle of it.
func awayFromBoundary() {
	now := time.Now()
	if left := now.Truncate(time.Minute).Add(time.Minute).Sub(now); left < 15*time.Second {
		time.Sleep(left + 200*time.Millisecond)
	}
}

// TestParityWithRatelimit runs envoyproxy/ratelimit's integration
// scenarios (test/integration/integration_test.go at RatelimitVersion:
// testBasicBaseConfig, testShareThreshold, testConfigReload, with the
// rules files of its test/integration/runtime) and the scenarios of
// sluice's differences found by replaying them, on the three services.
func TestParityWithRatelimit(t *testing.T) {
	r := newRig(t)
	rnd := strconv.FormatUint(rand.Uint64(), 10)

	t.Run("basic", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		r.ask(call{label: "unknown domain", req: req("foo", 1, "hello=world")})
		r.ask(call{label: "basic key1", req: req("basic", 1, "key1=foo")})
		for i := range 25 {
			r.ask(call{label: fmt.Sprintf("another key2 #%d", i+1), req: req("another", 1, "key2="+rnd)})
		}
		two := strconv.FormatUint(rand.Uint64(), 10)
		for i := range 15 {
			r.ask(call{label: fmt.Sprintf("another key2+key3 #%d", i+1), req: req("another", 1, "key2="+two, "key3="+two)})
		}
		first := r.ask(call{label: "key4 durTest, first", req: req("another", 1, "key4=durTest")})
		time.Sleep(2 * time.Second)
		second := r.ask(call{label: "key4 durTest, 2 s later", req: req("another", 1, "key4=durTest")})
		if second.statuses[0].reset >= first.statuses[0].reset {
			t.Errorf("duration_until_reset did not tick down: %d then %d", first.statuses[0].reset, second.statuses[0].reset)
		}
	})

	t.Run("share_threshold", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		for i := range 10 {
			r.ask(call{label: fmt.Sprintf("files/a.pdf #%d", i+1), req: req("share-threshold-test", 1, "files=files/a.pdf")})
		}
		r.ask(call{label: "files/b.csv shares the threshold", req: req("share-threshold-test", 1, "files=files/b.csv")})
		for i := range 10 {
			r.ask(call{label: fmt.Sprintf("files_no_share #%d", i+1),
				req: req("share-threshold-test", 1, fmt.Sprintf("files_no_share=files_no_share/%s-%d", rnd, i))})
		}
		for i := range 3 {
			r.ask(call{label: fmt.Sprintf("share_threshold above a deeper rule #%d", i+1),
				req: req("parity", 1, fmt.Sprintf("tenant=team-%d,path=/x", i))})
		}
	})

	t.Run("hits_addend", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		k := "hits=" + rnd
		r.ask(call{label: "hits_addend 5 on a limit of 3", req: req("parity", 5, k)})
		r.ask(call{label: "then 1", req: req("parity", 1, k)})
		k2 := "hits=partial-" + rnd
		r.ask(call{label: "2 of 3", req: req("parity", 2, k2)})
		r.ask(call{label: "2 more: over", req: req("parity", 2, k2)})
		r.ask(call{label: "then 1", req: req("parity", 1, k2)})
		k3 := "hits=descriptor-" + rnd
		r.ask(call{label: "a descriptor's hits_addend 4", req: descriptorHits(req("parity", 1, k3), 4)})
		r.ask(call{label: "a descriptor's hits_addend 0 after it", req: descriptorHits(req("parity", 1, k3), 0)})
		r.ask(call{label: "a peek at it beside another limit", req: descriptorHits(req("parity", 1, k3, "hits=next-to-"+rnd), 0)})
		r.ask(call{label: "the limit beside it", req: req("parity", 1, "hits=next-to-"+rnd)})
		k4 := "hits=full-" + rnd
		r.ask(call{label: "3 of 3", req: req("parity", 3, k4)})
		r.ask(call{label: "a peek at a window that went over beside one its request takes over", req: descriptorHits(req("parity", 1, k3, k4), 0)})
		r.ask(call{label: "a peek at the window taken over", req: descriptorHits(req("parity", 1, k4), 0)})
		r.ask(call{label: "requests_per_unit 0", req: req("parity", 1, "blocked="+rnd)})
		r.ask(call{label: "requests_per_unit 0 beside a limit", req: req("parity", 1, "hits=beside-"+rnd, "blocked="+rnd)})
		r.ask(call{label: "the limit beside it was not charged", req: req("parity", 1, "hits=beside-"+rnd)})
		k5 := "hits=full-beside-blocked-" + rnd
		r.ask(call{label: "3 of 3 beside nothing", req: req("parity", 3, k5)})
		r.ask(call{label: "requests_per_unit 0 beside a full limit", req: req("parity", 1, k5, "blocked="+rnd)})
		r.ask(call{label: "a peek at the full limit after it", req: descriptorHits(req("parity", 1, k5), 0)})
		k6 := "hits=twice-" + rnd
		r.ask(call{label: "one descriptor twice", req: req("parity", 1, k6, k6)})
		k7 := "hits=peeked-and-hit-" + rnd
		r.ask(call{label: "one descriptor peeked at, then hit", req: descriptorHits(req("parity", 2, k7, k7), 0)})
		k8 := "hits=twice-over-" + rnd
		r.ask(call{label: "one descriptor twice, over the limit together", req: req("parity", 2, k8, k8)})
		r.ask(call{label: "a peek at it after", req: descriptorHits(req("parity", 1, k8), 0)})
		r.ask(call{label: "a quota_mode descriptor twice", req: req("parity", 1, "quota=twice-"+rnd, "quota=twice-"+rnd)})
		r.ask(call{label: "a shadow_mode descriptor three times", req: req("parity", 1, "shadow=thrice-"+rnd, "shadow=thrice-"+rnd, "shadow=thrice-"+rnd)})
	})

	t.Run("calendar windows", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		for _, unit := range []string{"weekly", "monthly", "yearly"} {
			for i := range 3 {
				r.ask(call{label: fmt.Sprintf("%s #%d", unit, i+1), req: req("parity", 1, unit+"="+rnd)})
			}
		}
	})

	t.Run("modes", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		for i := range 2 {
			r.ask(call{label: fmt.Sprintf("quota_mode #%d", i+1), req: req("parity", 1, "quota="+rnd)})
			r.ask(call{label: fmt.Sprintf("shadow_mode #%d", i+1), req: req("parity", 1, "shadow="+rnd)})
		}
		// A request that only a shadow limit is over is admitted, and
		// sluice charges its other limits, as the default
		// envoyproxy/ratelimit does; with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT
		// it charges none of them, though it admits the request.
		r.ask(call{label: "over a shadow limit beside another", req: req("parity", 1, "shadow="+rnd, "hits=shadowed-"+rnd), asDefault: true})
		r.ask(call{label: "the other limit after it", req: req("parity", 1, "hits=shadowed-"+rnd), asDefault: true})
	})

	t.Run("names", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		for i := range 3 {
			r.ask(call{label: fmt.Sprintf("a name with spaces #%d", i+1), req: req("parity", 1, "named="+rnd)})
		}
		r.ask(call{label: "replaced by a name with '/' and ':'", req: req("parity", 1, "named=other-"+rnd, "renamer="+rnd)})
		r.ask(call{label: "the replaced limit after it", req: req("parity", 1, "named=other-"+rnd)})
	})

	t.Run("a key ending in a star", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		for i := range 3 {
			r.ask(call{label: fmt.Sprintf("key wild* matches wildcard_id #%d", i+1), req: req("parity", 1, "wildcard_id="+rnd)})
		}
		r.ask(call{label: "key wild* matches wild, in a count of its own", req: req("parity", 1, "wild="+rnd)})
		r.ask(call{label: "key wild* does not match wil", req: req("parity", 1, "wil="+rnd)})
		for i := range 3 {
			r.ask(call{label: fmt.Sprintf("key pool* with share_threshold: values of one key share a count #%d", i+1),
				req: req("parity", 1, fmt.Sprintf("pool_%s=v%d", rnd, i))})
		}
		r.ask(call{label: "key pool* with share_threshold: another key has a count of its own", req: req("parity", 1, "pool_other_"+rnd+"=v0")})
	})

	t.Run("example folder", func(t *testing.T) {
		awayFromBoundary()
		r.t = t
		x := "foo=" + rnd
		steps := []struct {
			label string
			req   *rlsv3.RateLimitRequest
		}{
			{"replaces: category account replaces bkthomps", req("rl", 1, x+",bar=bkthomps", "category=account")},
			{"bkthomps alone", req("rl", 1, x+",bar=bkthomps")},
			{"bkthomps alone again: over", req("rl", 1, x+",bar=bkthomps")},
			{"banned (requests_per_unit 0)", req("rl", 1, x+",bar=banned")},
			{"banned, replaced by override", req("rl", 1, x+",bar=banned", "source_cluster=proxy,destination_cluster=override")},
			{"fake_name replaced by category", req("rl", 1, "source_cluster=proxy,destination_cluster=fake", "category=account")},
			{"mock", req("rl", 1, "source_cluster=proxy,destination_cluster=mock")},
			{"mock again: over", req("rl", 1, "source_cluster=proxy,destination_cluster=mock")},
			{"unlimited bay", req("rl", 1, x+",bay=anything")},
			{"unlimited qux", req("rl", 1, "qux=anything")},
			{"baz per second", req("rl", 1, x+",baz=other")},
			{"detailed_metric unspec", req("rl", 1, "unspec="+rnd)},
			{"detailed_metric unspec 2", req("rl", 1, "unspec="+rnd)},
			{"detailed_metric unspec 3: over", req("rl", 1, "unspec="+rnd)},
			{"foo with bar=x: 3 per minute", req("rl", 1, x+",bar=x")},
			{"mongo_cps", req("mongo_cps", 1, "database=users")},
		}
		for _, s := range steps {
			r.ask(call{label: s.label, req: s.req})
		}
		for i := range 4 {
			r.ask(call{label: fmt.Sprintf("shadow_mode shady #%d", i+1), req: req("rl", 1, x+",baz=shady")})
		}
	})

	t.Run("reload", func(t *testing.T) {
		r.t = t
		r.ask(call{label: "reload domain before its file", req: req("reload", 1, "block=foo")})
		copyFile(t, filepath.Join(r.runtime, "reload.yaml"), filepath.Join(r.configDir, "reload.yaml"))
		r.waitReload("reload", true)
		r.ask(call{label: "reload key1 after the file came", req: req("reload", 1, "key1=foo")})
		r.ask(call{label: "reload block after the file came", req: req("reload", 1, "block=foo")})
		if err := os.Remove(filepath.Join(r.configDir, "reload.yaml")); err != nil {
			t.Fatal(err)
		}
		r.waitReload("reload", false)
		r.ask(call{label: "reload domain after its file went", req: req("reload", 1, "key1=foo")})
	})

	r.t = t
	t.Logf("%d calls: sluice gave envoyproxy/ratelimit's answer (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT) on %d, "+
		"the others differed only as documented (a request over a shadow limit only); "+
		"the default envoyproxy/ratelimit's on %d (the others: the all-or-nothing rule)", r.calls, r.calls-r.documented, r.agreeDflt)
}

// waitReload waits until every service has (loaded true) or has not the
// domain, asking with a descriptor of its own that no scenario uses.
func (r *rig) waitReload(domain string, loaded bool) {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, s := range []*service{r.sluice, r.stop, r.dflt} {
		for i := 0; ; i++ {
			resp := s.ask(r.t, req(domain, 0, "key1=probe-"+strconv.Itoa(i)))
			if (resp.GetStatuses()[0].GetCurrentLimit() != nil) == loaded {
				break
			}
			if time.Now().After(deadline) {
				r.t.Fatalf("%s did not reload (domain %s loaded: %v wanted)", s.name, domain, loaded)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
