package server

import (
	"log/slog"

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
