// Package degrade turns load signals into a degradation level with
// hysteresis, so that a server under overload sheds work in steps — cheaper
// limits, then no expensive endpoints, then no writes, then only health
// checks — and recovers in steps as the load drops.
package degrade

import "fmt"

// Level is a degradation level.
type Level int

// The levels, from normal to critical.
const (
	// Normal: every limit as configured.
	Normal Level = 0
	// Elevated: limits × the configured factor; endpoints of class
	// "expensive" answer 503.
	Elevated Level = 1
	// High: also writes are refused except class "critical"; in proxy mode
	// reads (GET, HEAD) may be answered from a short stale cache of GET
	// responses.
	High Level = 2
	// Critical: only health checks are served.
	Critical Level = 3
)

// String returns the level's name: normal, elevated, high, critical.
func (l Level) String() string {
	switch l {
	case Normal:
		return "normal"
	case Elevated:
		return "elevated"
	case High:
		return "high"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// ParseLevel accepts a level's name or its number.
func ParseLevel(s string) (Level, error) {
	for l := Normal; l <= Critical; l++ {
		if s == l.String() || s == fmt.Sprint(int(l)) {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown degradation level %q (normal, elevated, high, critical or 0-3)", s)
}
