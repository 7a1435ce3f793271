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
// and giving none back, after a reset of key's states in Redis whose time
// is not known (Guarded.Reset, when Redis did not answer it): the fresh
// state, if any, never counted them. Their entries are
// forgotten, so that a take still running for one installs nothing; its
// units go back, which lease.lua allows only for a take the fresh state
// counted (see Store.Reset). Their units count in LeaseStats.Lost.
func (l *Leased) reset(key string, limits []sluice.Limit) {
	l.resetIDs(key, limitIDs(limits))
}

// resetNotice ends the leases held of key's limits of the given IDs when
// the watch reads a reset of them (see readResets): those taken at or
// before at, the shared state's time of the reset, when known (resetBefore);
// else every one (resetIDs).
func (l *Leased) resetNotice(key string, ids []string, at int64, known bool) {
	if known {
		l.resetBefore(key, ids, at)
		return
	}
	l.resetIDs(key, ids)
}

// resetBefore ends the leases held of key's limits of the given IDs that
// were taken at or before at, the shared state's time of their reset
// (Store.Reset), spending none of their units and giving none back: the
// fresh state never counted them. A lease taken after it was counted by
// the fresh state and is kept, and so is what the entry knows. A take
// still running that the shared state ran at or before at installs
// nothing (see install). Their units count in LeaseStats.Lost.
func (l *Leased) resetBefore(key string, ids []string, at int64) {
	if l.next == nil {
		return
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, id := range ids {
		e := l.entries[leaseKey{key, id}]
		if e == nil {
			continue
		}
		e.mu.Lock()
		e.resetAt = max(e.resetAt, at)
		for _, ls := range []*lease{&e.cur, &e.next} {
			if ls.leased > 0 && ls.at <= at {
				l.stats.lost.Add(ls.units)
				*ls = lease{}
			}
		}
		e.mu.Unlock()
	}
}

// resetIDs ends the leases held of key's limits of the given IDs, as
// reset does, when the time of their reset is not known (see
// readResets). A lease taken since the reset ends too: its units, which
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
