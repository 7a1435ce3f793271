package redis

import "github.com/sluice-dev/sluice"

// drop ends every lease held and every give-back queued, spending none of
// their units and giving none back: the shared state that counted them is
// lost (a master back at its address without its data, or a replica that
// took over without its predecessor's last writes). The state there now
// never counted them, so spending them would admit units beyond what it
// allows, and giving them back would take them out of what it counts for
// other instances. Takes sent before drop install nothing (see install).
// Their units count in LeaseStats.Lost. Calls then take leases from the
// state as it is.
func (l *Leased) drop() {
	l.pendingMu.Lock()
	l.epoch.Add(1)
	for i := range l.pending {
		l.stats.lost.Add(l.pending[i].Cost)
	}
	l.pending, l.marks, l.ats = nil, nil, nil
	l.pendingMu.Unlock()

	l.mu.RLock()
	all := make([]*leaseEntry, 0, len(l.entries))
	for _, e := range l.entries {
		all = append(all, e)
	}
	l.mu.RUnlock()
	for _, e := range all {
		e.mu.Lock()
		l.stats.lost.Add(e.held())
		e.cur, e.next = lease{}, lease{}
		e.mu.Unlock()
	}
}

// reset ends the leases held of key's limits, spending none of their units
// and giving none back, after a reset of key's states in Redis
// (Guarded.Reset): the fresh state never counted them. Their entries are
// forgotten, so that a take still running for one installs nothing; its
// units go back, which lease.lua allows only for a take the fresh state
// counted (see Store.Reset). Their units count in LeaseStats.Lost.
func (l *Leased) reset(key string, limits []sluice.Limit) {
	ids := make([]string, len(limits))
	for i, lim := range limits {
		ids[i] = lim.ID()
	}
	l.resetIDs(key, ids)
}

// resetIDs ends the leases held of key's limits of the given IDs, as
// reset does, when another instance announces their reset (see
// resetStream). A lease taken since the reset ends too: its units, which
// the fresh state counted, are neither spent nor given back.
func (l *Leased) resetIDs(key string, ids []string) {
	if l.next == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		k := leaseKey{key, id}
		e := l.entries[k]
		if e == nil {
			continue
		}
		e.mu.Lock()
		l.stats.lost.Add(e.held())
		e.cur, e.next = lease{}, lease{}
		e.dead = true
		e.mu.Unlock()
		delete(l.entries, k)
	}
}
