package server

import "github.com/prometheus/client_golang/prometheus"

// registerer is a prometheus.Registerer, over the Registry in its field
// to, that never panics: MustRegister registers as Register does, and err
// holds the first error either returned (such as a metric whose name the
// Registry already holds). undo unregisters every metric it registered,
// leaving the Registry as it was. It is not safe for concurrent use.
type registerer struct {
	to    *prometheus.Registry
	added []prometheus.Collector
	err   error
}

// Register registers c with r.to, returning its error, the first of which
// r keeps.
func (r *registerer) Register(c prometheus.Collector) error {
	if err := r.to.Register(c); err != nil {
		if r.err == nil {
			r.err = err
		}
		return err
	}
	r.added = append(r.added, c)
	return nil
}

// MustRegister registers each of cs, as Register does: it never panics.
func (r *registerer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		_ = r.Register(c) // kept in r.err
	}
}

// Unregister unregisters c from r.to.
func (r *registerer) Unregister(c prometheus.Collector) bool { return r.to.Unregister(c) }

// undo unregisters every metric r registered.
func (r *registerer) undo() {
	for _, c := range r.added {
		r.to.Unregister(c)
	}
	r.added = nil
}
