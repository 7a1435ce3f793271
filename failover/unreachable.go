package failover

// Unreachable records that the node called name (see Options.Node; ""
// without it) failed to answer a call made around the Store, or took over
// from one that may have, as of now: package redis's Open reads every
// node every 100 ms, and tells of the masters it finds promoted. Under
// Local with a Charge, the node's next call then returns to the primary as
// after a failure of the Store's own (see Store), and Direct reports false
// until its return period has passed. An instance whose calls did not reach the
// node while it was down — leases covered them, or it had none — would
// otherwise decide there alone as soon as it is back, before the
// instances that fell back have charged what they admitted, and their
// charges would find nothing left. Under the other policies, and on the
// zero Store, it does nothing. It is safe for concurrent use.
func (f *Store) Unreachable(name string) {
	if f.primary == nil || f.charge == nil || f.ledger == nil {
		return
	}
	f.nodes.get(name).fellBack.Store(true)
}
