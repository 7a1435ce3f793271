package failover

import (
	"iter"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluice-dev/sluice"
)

// NodeStats counts what a Store has done with the calls of one node of its
// primary (see Options.Node).
type NodeStats struct {
	// Breaker is the node's breaker state now (see Stats.Breaker).
	Breaker BreakerState
	// BreakerOpens counts how often the node's breaker opened.
	BreakerOpens int64
	// StoreErrors counts the node's calls that failed.
	StoreErrors int64
	// FallbackDecisions counts calls decided by the OnError rule because of the
	// node: it failed, its breaker was open, or it was returning.
	FallbackDecisions int64
	// Returning reports whether the node is in its return period now,
	// for all its keys or for the keys of some of its limits (see Store).
	Returning bool
}

// maxNodes bounds the breakers a Store keeps. Nodes are a deployment's
// servers, a handful; past the bound (a Node function that names keys, not
// servers) every further name shares one breaker.
const maxNodes = 1024

// overflowNode is the name of the breaker shared past maxNodes.
const overflowNode = "(other)"

// staleNode is how long after its last call or probe a node is left out
// of Stats, on the Store's elapsed time (see BreakerOptions.Clock): a node
// the primary no longer routes to (a master replaced by its replica) says
// nothing of the primary's health.
const staleNode = 10 * time.Second

// node is one node of the primary: its breaker and its counts.
type node struct {
	name        string
	seen        atomic.Int64 // when a call or a probe was last routed to it, on Store.elapsed plus one (0: never; coarse)
	returnUntil atomic.Int64 // the end of its return period, on Store.elapsed; 0: none yet
	// returns counts the calls deciding whether they return through it, and
	// the return calls in flight (see Store.returning): a call on the
	// primary after the return period waits for them to have charged.
	returns atomic.Int64
	fresh   atomic.Bool // made while keys were owed: see returning
	// fellBack is set when a call on the node is decided locally with
	// units admitted and the decision blames the node (it failed, or its
	// breaker was open), or the node failed to answer a call made around
	// the Store (Unreachable), and cleared when a return period starts:
	// see returning. A decision that blames another node of the call
	// charges the node's keys it admitted at once instead (Store.owe): the
	// node falls back if that charge fails; if the call's bound cuts it
	// short, the limits of those keys do (marks).
	fellBack    atomic.Bool
	marks       marks
	breaker     breaker
	storeErrors atomic.Int64
	fallbacks   atomic.Int64
	// lastFallback is when a call was last decided by the OnError rule
	// because of the node, on Store.elapsed plus one (0: never).
	lastFallback atomic.Int64
	// probe is a check of a failed call on the node, as a peek: of its
	// first, then of each that opened the breaker. It is what a probe asks
	// the primary (see Store.Probe and Store.failed).
	probe atomic.Pointer[sluice.Check]
}

// nodes holds a breaker per node, made on first use.
type nodes struct {
	opts     BreakerOptions
	onChange func(node string, from, to BreakerState)
	onCreate func(*node) // called with mu held
	onOpen   func()      // called when a breaker opens, with its lock held

	mu sync.RWMutex
	m  map[string]*node
}

// get returns the node called name, made if new.
func (ns *nodes) get(name string) *node {
	ns.mu.RLock()
	n := ns.m[name]
	ns.mu.RUnlock()
	if n != nil {
		return n
	}
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if n = ns.m[name]; n != nil {
		return n
	}
	if len(ns.m) >= maxNodes {
		if n = ns.m[overflowNode]; n != nil {
			return n
		}
		name = overflowNode
	}
	n = &node{name: name, breaker: breaker{opts: ns.opts}}
	if user, nodeHook, opened := ns.opts.OnStateChange, ns.onChange, ns.onOpen; user != nil || nodeHook != nil || opened != nil {
		n.breaker.opts.OnStateChange = func(from, to BreakerState) {
			if user != nil {
				user(from, to)
			}
			if nodeHook != nil {
				nodeHook(name, from, to)
			}
			if opened != nil && to == BreakerOpen {
				opened()
			}
		}
	}
	if ns.m == nil {
		ns.m = make(map[string]*node)
	}
	if ns.onCreate != nil {
		ns.onCreate(n)
	}
	ns.m[name] = n
	return n
}

// touch records that a call or a probe is routed to n at now, on
// Store.elapsed, to within 100 ms.
func (n *node) touch(now int64) {
	if seen := n.seen.Load(); seen == 0 || now+1-seen > int64(100*time.Millisecond) {
		n.seen.Store(now + 1)
	}
}

// each calls fn for every node that a call or a probe was routed to within
// staleNode of now, on Store.elapsed, and for the only node of a Store that
// has one (without Options.Node, always).
func (ns *nodes) each(now int64, fn func(*node)) {
	ns.mu.RLock()
	defer ns.mu.RUnlock()
	since := now - int64(staleNode)
	for _, n := range ns.m {
		if seen := n.seen.Load(); len(ns.m) == 1 || seen != 0 && seen-1 >= since {
			fn(n)
		}
	}
}

// nodeName returns the name of the node of c (Options.Node), "" without
// one.
func (f *Store) nodeName(c *sluice.Check) string {
	if f.nodeOf == nil {
		return ""
	}
	return f.nodeOf(c)
}

// nodeNames yields the names of the nodes of checks (Options.Node; "" for
// every check without one), in order, a run of checks on one node once.
func (f *Store) nodeNames(checks []sluice.Check) iter.Seq[string] {
	return func(yield func(string) bool) {
		var last string
		for i := range checks {
			name := f.nodeName(&checks[i])
			if i > 0 && name == last {
				continue
			}
			last = name
			if !yield(name) {
				return
			}
		}
	}
}

// nodesOf appends the nodes of checks to ns, in order of first check,
// without repeats, and returns the extended slice. Most calls have one
// node: a caller passes a small array's slice to keep it off the heap.
func (f *Store) nodesOf(checks []sluice.Check, ns []*node) []*node {
	if f.nodeOf == nil {
		return append(ns, f.nodes.get(""))
	}
	first := len(ns)
	now := f.elapsed()
	var last string
	for i := range checks {
		name := f.nodeOf(&checks[i])
		if i > 0 && name == last {
			continue
		}
		last = name
		n := f.nodes.get(name)
		n.touch(now)
		if !slices.Contains(ns[first:], n) {
			ns = append(ns, n)
		}
	}
	return ns
}
