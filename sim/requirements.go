package sim

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/sluice-dev/sluice/internal/dialaddr"
	"github.com/sluice-dev/sluice/internal/yamlcheck"
)

// Precision levels of Requirements.
const (
	// PrecisionStrict: never more than the quantity in any window, however
	// the requests are timed.
	PrecisionStrict = "strict"
	// PrecisionApproximate: never more than the quantity in any window
	// either, but a limit that refuses somewhat earlier than an exact
	// window would (a bucket whose burst and refill add up to the quantity)
	// is acceptable in exchange for less memory.
	PrecisionApproximate = "approximate"
	// PrecisionLoose: up to about twice the quantity across a window
	// boundary is acceptable in exchange for the simplest behaviour. It is
	// the only precision whose recommendation may admit more than the
	// quantity in a window.
	PrecisionLoose = "loose"
)

// Requirements are what `sluice design` asks: the limit to enforce and the
// circumstances. They read from YAML (ReadRequirements) or JSON:
//
//	rate: 100/1m          # quantity per window, per key; or per week, month, year
//	zone: "+09:00"        # a calendar quota's zone (default UTC)
//	starts: 15            # a calendar month's first day (a week's: a weekday)
//	burst: 20             # most units a client may send at once (0: the quantity)
//	precision: strict     # strict | approximate | loose
//	keys: 10000           # distinct keys (clients) live at once
//	instances: 3          # servers enforcing the limit together
//	store: auto           # auto | memory | redis
type Requirements struct {
	// Rate is the limit as ParseRate reads it, e.g. "100/1m". Required.
	// A rate per week, month or year is a quota per calendar period, as a
	// billing plan states it ("10000/month"): Design recommends the
	// calendar fixed window for it, whatever the precision.
	Rate string `yaml:"rate" json:"rate"`
	// Zone and Starts shift a calendar quota's periods as the
	// configuration's zone and starts do: Zone is UTC (default) or a fixed
	// offset from it ("+09:00"); Starts a weekday for a week (default
	// monday) or a day from 1 to 28 for a month (default 1). A rate per
	// day with a zone is a quota per calendar day of that zone.
	Zone   string `yaml:"zone" json:"zone,omitempty"`
	Starts Starts `yaml:"starts" json:"starts,omitempty"`
	// Burst is the burst tolerance: the most units one key may spend at
	// once, at most the quantity. 0 (the default) means the whole
	// quantity: within a window, requests may come in any pattern. A calendar quota takes none: a
	// second limit (a rate per second or minute) bounds its bursts.
	Burst int64 `yaml:"burst" json:"burst,omitempty"`
	// Precision is one of PrecisionStrict, PrecisionApproximate (default)
	// and PrecisionLoose.
	Precision string `yaml:"precision" json:"precision,omitempty"`
	// Keys is how many distinct keys are live at once. Default 1000.
	Keys int64 `yaml:"keys" json:"keys,omitempty"`
	// Instances is how many sluice instances enforce the limit together.
	// Default 1.
	Instances int `yaml:"instances" json:"instances,omitempty"`
	// Store is "auto" (default: memory for one instance, Redis for
	// several), "memory" or "redis".
	Store string `yaml:"store" json:"store,omitempty"`
	// RedisMode is "standalone", "sentinel" or "cluster"; empty chooses
	// standalone, or cluster when the state would not fit one server.
	RedisMode string `yaml:"redis_mode" json:"redis_mode,omitempty"`
	// RedisAddresses are the Redis addresses for the config, host:port
	// each as the config accepts them (dialaddr.Check: no user
	// information, query or path in the host, no control character, a
	// port from 1 to 65535 or a service's name; and no environment
	// variable, ${NAME}, which the config never expands) and without
	// spaces; default localhost:6379. More
	// than one needs a mode other than standalone, given or chosen.
	RedisAddresses []string `yaml:"redis_addresses" json:"redis_addresses,omitempty"`
	// Name is the limit's name in the config, headers and metrics; default
	// after the window ("per-minute").
	Name string `yaml:"name" json:"name,omitempty"`
	// Seed drives the simulations behind the analysis. Default 1.
	Seed uint64 `yaml:"seed" json:"seed,omitempty"`
	// MaxArrivals bounds each simulated scenario (≤ 0: 300,000 requests);
	// a web handler sets it lower. It is not read from YAML or JSON.
	MaxArrivals int `yaml:"-" json:"-"`
	// minCapacity is the most one request may cost (DesignAPI sets it from
	// the endpoints' costs): a bucket's burst is never made smaller.
	minCapacity int64
	// src is where ReadRequirements read r; nil for requirements built
	// otherwise.
	src *source
}

// ReadRequirements reads requirements from YAML, at most 1 MiB of it;
// name labels errors (usually the file name). An unknown field, a key set
// twice or a value of the wrong type is an error naming the field and its
// name:line:col; so is, from Validate and Design, a value they refuse
// (while it is still the one read).
func ReadRequirements(r io.Reader, name string) (Requirements, error) {
	req, src, err := readYAML[Requirements](r, name, "rate: 100/1m")
	req.src = src
	return req, err
}

// rate returns the requirement's rate, zone and starts applied; r has
// passed withDefaults.
func (r Requirements) rate() rate {
	rt, _ := calendarOf(r.Rate, r.Zone, r.Starts)
	return rt
}

// Validate reports what Design would refuse in r — no rate, a rate, zone,
// burst, precision, store or other field it cannot read or that contradict
// each other — without simulating anything.
//
// A refused value read by ReadRequirements, and not changed since, is
// reported at its file:line:col.
func (r Requirements) Validate() error {
	_, err := r.withDefaults()
	return r.src.locate(r, err)
}

// withDefaults returns r with defaults applied, or why it cannot be designed.
func (r Requirements) withDefaults() (Requirements, error) {
	if r.Rate == "" {
		return r, fmt.Errorf("requirements: %w", fieldErrorf("rate", "required, e.g. rate: 100/1m"))
	}
	rt, err := calendarOf(r.Rate, r.Zone, r.Starts)
	if err != nil {
		return r, fmt.Errorf("requirements: %w", rateError("", err))
	}
	// The rate as it reads, without the space around it that parsing
	// ignores: it is written into a comment line of the configuration.
	r.Rate = strings.TrimSpace(r.Rate)
	if r.Burst > rt.q {
		return r, fmt.Errorf("requirements: %w", fieldErrorf("burst", "%d must be in [0, %d]: no window admits more than the quantity", r.Burst, rt.q))
	}
	if rt.calendar() && r.Burst > 0 && r.Burst < rt.q {
		return r, fmt.Errorf("requirements: %w", fieldErrorf("burst", "%d: a quota per calendar %v has no burst of its own; bound its bursts with a second limit beside it, such as a rate per second or minute", r.Burst, rt.period))
	}
	if r.Precision == "" {
		r.Precision = PrecisionApproximate
	}
	if r.Keys == 0 {
		r.Keys = 1000
	}
	if r.Instances == 0 {
		r.Instances = 1
	}
	if r.Store == "" {
		r.Store = "auto"
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if len(r.RedisAddresses) == 0 {
		r.RedisAddresses = []string{"localhost:6379"}
	}
	switch {
	case r.Precision != PrecisionStrict && r.Precision != PrecisionApproximate && r.Precision != PrecisionLoose:
		return r, fmt.Errorf("requirements: %w", fieldErrorf("precision", "%q: use strict, approximate or loose", r.Precision))
	case r.Burst < 0:
		return r, fmt.Errorf("requirements: %w", fieldErrorf("burst", "%d must be ≥ 0", r.Burst))
	case r.Keys < 1 || r.Keys > 1<<40:
		return r, fmt.Errorf("requirements: %w", fieldErrorf("keys", "%d must be in [1, 2^40]", r.Keys))
	case r.Instances < 1 || r.Instances > 10_000:
		return r, fmt.Errorf("requirements: %w", fieldErrorf("instances", "%d must be in [1, 10000]", r.Instances))
	case r.Store != "auto" && r.Store != "memory" && r.Store != "redis":
		return r, fmt.Errorf("requirements: %w", fieldErrorf("store", "%q: use auto, memory or redis", r.Store))
	case r.RedisMode != "" && r.RedisMode != "standalone" && r.RedisMode != "sentinel" && r.RedisMode != "cluster":
		return r, fmt.Errorf("requirements: %w", fieldErrorf("redis_mode", "%q: use standalone, sentinel or cluster", r.RedisMode))
	}
	for i, a := range r.RedisAddresses {
		// The configuration's rules (dialaddr.Check, and no environment
		// variable in any value), and no space or tab: an address is
		// written as given, and dialled as written.
		err := dialaddr.Check(a)
		switch {
		case err == nil && unexpanded(a):
			err = errors.New("environment variables (${NAME}) are not expanded: write the address itself")
		case err == nil && strings.ContainsAny(a, " \t"):
			err = errors.New("it holds a space or a tab")
		}
		if err != nil {
			return r, fmt.Errorf("requirements: %w", fieldErrorf(fmt.Sprintf("redis_addresses[%d]", i), "%q is not host:port (e.g. redis.internal:6379): %v", dialaddr.Shown(a), err))
		}
	}
	return r, nil
}

// unexpanded reports whether s, a value the designer writes into the
// configuration, asks for an environment variable the configuration
// refuses to read as text (yamlcheck.EnvVariable, yamlcheck.BareVariable):
// "${REDIS_HOST}:6379", "$USER_HEADER".
func unexpanded(s string) bool {
	return yamlcheck.EnvVariable(s) || yamlcheck.BareVariable(s)
}

// oneServer returns an error when a Redis store of mode, as given or as
// the designer chose it, is standalone and addresses name several servers:
// a standalone store talks to one, and the configuration refuses more.
func oneServer(mode string, addresses []string) error {
	if mode != "standalone" || len(addresses) <= 1 {
		return nil
	}
	return fieldErrorf("redis_addresses[1]", "%d addresses name several servers: set redis_mode to sentinel or cluster (standalone is one server)", len(addresses))
}
