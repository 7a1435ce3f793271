package server

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/degrade"
)

// unknownCPU logs a CPU share the monitor could not measure
// (degrade.Signals.CPUUnknown: its cgroup's count unreadable): a warning
// when it turns unknown, its thresholds then deciding nothing, and a line
// when it is measured again, counting the samples it was unknown for;
// nothing at the samples between, so that a CPU unknown for days is two
// lines. The zero value is ready to use; it is not safe for concurrent use
// (the sampling loop owns it).
type unknownCPU struct {
	samples int64 // the samples the CPU has been unknown for, 0 while known
}

// note logs what s says of its CPU if it turned unknown, or was measured
// again, since the previous sample noted.
func (u *unknownCPU) note(log *slog.Logger, s degrade.Signals) {
	switch {
	case s.CPUUnknown && u.samples == 0:
		log.Warn("degradation signal unknown", "signal", "cpu",
			"effect", "its thresholds decide no level until it is measured again")
	case !s.CPUUnknown && u.samples > 0:
		log.Info("degradation signal measured again", "signal", "cpu", "unknown_samples", u.samples)
		u.samples = 0
	}
	if s.CPUUnknown {
		u.samples++
	}
}

// unmeasured logs, once per configuration, the request signals its
// degradation levels are entered by that nothing measures: without an
// upstream sluice proxies no request, and in_flight, p99 and error_rate
// are of the reverse proxy's requests and its upstream's answers
// (forward-auth's, the decision API's and Envoy's calls are not counted),
// so their thresholds are never reached. The zero value is ready to use;
// it is not safe for concurrent use (the sampling loop owns it).
type unmeasured struct {
	cfg *config.Config // the configuration last noted
}

// note logs a warning naming the request signals of cfg's thresholds if
// cfg has no upstream, unless cfg was the configuration noted before.
func (u *unmeasured) note(log *slog.Logger, cfg *config.Config) {
	if cfg == u.cfg {
		return
	}
	u.cfg = cfg
	if cfg.Upstream != "" {
		return
	}
	var names []string
	for _, r := range cfg.Degradation.Controller.Rules {
		for _, s := range []struct {
			name string
			set  bool
		}{{"in_flight", r.Enter.InFlight > 0}, {"p99", r.Enter.P99 > 0}, {"error_rate", r.Enter.ErrorRate > 0}} {
			if s.set && !slices.Contains(names, s.name) {
				names = append(names, s.name)
			}
		}
	}
	if len(names) > 0 {
		log.Warn("degradation signal unmeasured", "signals", strings.Join(names, ", "),
			"effect", "no upstream: they measure the reverse proxy's requests, so their thresholds decide no level")
	}
}

// unlimitedMemory logs that the memory thresholds of the degradation
// levels can never be reached when nothing limits the process's memory
// (degrade.Signals.MemoryUnlimited: no cgroup limit, no GOMEMLIMIT), whose
// share then reads 0: once per configuration with such a threshold, and
// again when a limit that was there goes. The zero value is ready to use;
// it is not safe for concurrent use (the sampling loop owns it).
type unlimitedMemory struct {
	cfg       *config.Config // the configuration last noted
	unlimited bool           // whether the memory was unlimited then
}

// note logs a warning if cfg has a memory threshold and s says the memory
// is unlimited, unless the same was noted before.
func (u *unlimitedMemory) note(log *slog.Logger, cfg *config.Config, s degrade.Signals) {
	if cfg == u.cfg && s.MemoryUnlimited == u.unlimited {
		return
	}
	u.cfg, u.unlimited = cfg, s.MemoryUnlimited
	if !s.MemoryUnlimited {
		return
	}
	for _, r := range cfg.Degradation.Controller.Rules {
		if r.Enter.Memory > 0 {
			log.Warn("degradation signal unmeasured", "signals", "memory",
				"effect", "no memory limit (a cgroup's, or GOMEMLIMIT): its share reads 0, so its thresholds decide no level")
			return
		}
	}
}
