package config

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// maxShedWait bounds degradation.retry_after and degradation.min_dwell.
// Both outlast the overload that set a level: retry_after tells every shed
// client to stay away that long, and min_dwell holds a level, refusing what
// it refuses, that long after its signals clear. An overload is minutes; an
// operator who wants refusals to go on for longer pins a level through the
// admin API, which says so and can be undone.
const maxShedWait = time.Hour

// retryAfter decodes degradation.retry_after, at most maxShedWait.
func (d *decoder) retryAfter(n *yaml.Node, p string) time.Duration {
	return d.durationAtMost(n, p, maxShedWait,
		"every client shed would be told to stay away that long, long after an overload ends (pin a level through /v1/degradation to refuse for longer)")
}

// minDwell decodes degradation.min_dwell, at most maxShedWait.
func (d *decoder) minDwell(n *yaml.Node, p string) time.Duration {
	return d.durationAtMost(n, p, maxShedWait,
		"a level would go on refusing that long after its signals clear (pin a level through /v1/degradation to hold it longer)")
}

// durationAtMost decodes a positive duration of at most most, refusing a
// longer one at n with why.
func (d *decoder) durationAtMost(n *yaml.Node, p string, most time.Duration, why string) time.Duration {
	before := len(d.Errs)
	v := d.Duration(n, p)
	if len(d.Errs) == before && v > most {
		d.Errorf(n, p, "%v, more than %v: %s", v, strings.TrimSuffix(strings.TrimSuffix(most.String(), "0s"), "0m"), why)
	}
	return v
}
