package sluice

import (
	"runtime"
	"sync"
	"weak"
)

// specs holds the spec of every Limit alive, by its parameters as given:
// equal Limits share one spec, so that a Limit is one pointer to copy and
// == compares Limits by their parameters. An entry goes when no Limit
// holds its spec any more.
var specs struct {
	mu sync.Mutex
	m  map[specKey]weak.Pointer[spec]
}

// intern returns the Limit of k: the spec a live Limit of k holds, else
// one built now.
func intern(k specKey) Limit {
	specs.mu.Lock()
	defer specs.mu.Unlock()
	if w, ok := specs.m[k]; ok {
		if s := w.Value(); s != nil {
			return Limit{s}
		}
	}
	if specs.m == nil {
		specs.m = make(map[specKey]weak.Pointer[spec])
	}
	s := build(k)
	w := weak.Make(s)
	specs.m[k] = w
	runtime.AddCleanup(s, forget, specEntry{k, w})
	return Limit{s}
}

// specEntry is one entry of specs.
type specEntry struct {
	k specKey
	w weak.Pointer[spec]
}

// forget removes e from specs once its spec is unreachable, unless a
// spec of the same key has replaced it.
func forget(e specEntry) {
	specs.mu.Lock()
	defer specs.mu.Unlock()
	if specs.m[e.k] == e.w {
		delete(specs.m, e.k)
	}
}
