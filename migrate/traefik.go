package migrate

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice"
)

// traefikRateLimit is the rateLimit middleware's configuration.
type traefikRateLimit struct {
	Average         int64     `yaml:"average"`
	Period          yaml.Node `yaml:"period"`
	Burst           *int64    `yaml:"burst"`
	SourceCriterion *struct {
		IPStrategy *struct {
			Depth       int      `yaml:"depth"`
			ExcludedIPs []string `yaml:"excludedIPs"`
		} `yaml:"ipStrategy"`
		RequestHeaderName string `yaml:"requestHeaderName"`
		RequestHost       bool   `yaml:"requestHost"`
	} `yaml:"sourceCriterion"`
}

// traefikDoc is a file-provider configuration or a Kubernetes Middleware.
type traefikDoc struct {
	HTTP struct {
		Middlewares map[string]struct {
			RateLimit *traefikRateLimit `yaml:"rateLimit"`
		} `yaml:"middlewares"`
	} `yaml:"http"`
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		RateLimit *traefikRateLimit `yaml:"rateLimit"`
	} `yaml:"spec"`
}

// Traefik translates Traefik's rateLimit middlewares: a file-provider
// configuration (http.middlewares) or Kubernetes Middleware resources, in
// one or several YAML documents; source names the file.
func Traefik(src, source string) (*Translation, error) {
	t := &Translation{Format: FormatTraefik, Source: source}
	type found struct {
		name string
		rl   *traefikRateLimit
	}
	var all []found
	dec := yaml.NewDecoder(strings.NewReader(src))
	for {
		var d traefikDoc
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s", source, strings.TrimPrefix(err.Error(), "yaml: "))
		}
		names := make([]string, 0, len(d.HTTP.Middlewares))
		for name := range d.HTTP.Middlewares {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if rl := d.HTTP.Middlewares[name].RateLimit; rl != nil {
				all = append(all, found{name, rl})
			}
		}
		if d.Kind == "Middleware" && d.Spec.RateLimit != nil {
			all = append(all, found{d.Metadata.Name, d.Spec.RateLimit})
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%s: no rateLimit middleware", source)
	}
	for _, f := range all {
		if err := t.traefikLimit(f.name, f.rl); err != nil {
			return nil, fmt.Errorf("%s: middleware %s: %w", source, f.name, err)
		}
	}
	if len(all) > 1 {
		t.differs("middlewares", "Traefik applies each middleware to the routers that name it; sluice's one plan applies every imported limit to every request. Limits meant for different routers belong in separate sluice configurations or in the services.")
	}
	t.differs("headers", "Traefik sends no rate-limit headers and refuses with a bare 429; sluice adds RateLimit headers, Retry-After and a problem+json body.")
	return t, nil
}

// traefikPeriod reads period: a Go duration ("1m") or seconds (60); 1s when
// absent.
func traefikPeriod(n yaml.Node) (time.Duration, error) {
	if n.Kind == 0 {
		return time.Second, nil
	}
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("period: want a duration")
	}
	if s, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
		if s < 1 || s > 1e7 {
			return 0, fmt.Errorf("period %q is out of range", n.Value)
		}
		return time.Duration(s) * time.Second, nil
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < time.Microsecond || d%time.Microsecond != 0 || d > sluice.MaxWindow {
		return 0, fmt.Errorf("period %q: want a duration such as 1s or 1m", n.Value)
	}
	return d, nil
}

// traefikLimit adds the limit of one middleware.
func (t *Translation) traefikLimit(name string, rl *traefikRateLimit) error {
	where := "middleware " + name
	period, err := traefikPeriod(rl.Period)
	if err != nil {
		return err
	}
	if rl.Average <= 0 {
		t.same(where, "average 0: Traefik does not limit; not imported.")
		return nil
	}
	if rl.Average > sluice.MaxQuantity {
		return fmt.Errorf("average %d is out of range", rl.Average)
	}
	burst := int64(1)
	if rl.Burst != nil {
		burst = *rl.Burst
	}
	if burst < 1 || burst > sluice.MaxQuantity {
		return fmt.Errorf("burst %d must be ≥ 1", burst)
	}
	// Traefik holds a request whose token comes within maxDelay: half the
	// interval between tokens (rates of at least one per second), else 500ms.
	perSecond := float64(rl.Average) * float64(time.Second) / float64(period)
	maxDelay := 500 * time.Millisecond
	if perSecond >= 1 {
		maxDelay = time.Second / (time.Duration(perSecond) * 2)
	}
	maxDelay = max(maxDelay.Truncate(time.Microsecond), time.Microsecond)
	l := Limit{Name: t.limitName(name), Algorithm: "leaky-bucket", Quantity: rl.Average, Window: period, Burst: burst, MaxWait: maxDelay,
		Source: fmt.Sprintf("%s: average %d per %s, burst %d", where, rl.Average, period, burst)}
	t.same(where, "Traefik's token bucket of %d refilled at %d per %s (golang.org/x/time/rate) holds a request whose token comes within %s and refuses the rest; sluice's leaky-bucket queue of burst %d with max_wait %s admits the same requests after the same waits.",
		burst, rl.Average, period, maxDelay, burst, maxDelay)
	sc := rl.SourceCriterion
	switch {
	case sc == nil || (sc.RequestHeaderName == "" && !sc.RequestHost):
		t.IPv6Prefix = 128
		t.same(where+" source", "one bucket per client address (ipv6_prefix: 128 keeps one per IPv6 address).")
		if sc != nil && sc.IPStrategy != nil && sc.IPStrategy.Depth > 0 {
			t.differs(where+" ipStrategy", "depth %d takes the address %d hops from the right of X-Forwarded-For; sluice takes the rightmost address not in identity.trusted_proxies: list your proxies there.", sc.IPStrategy.Depth, sc.IPStrategy.Depth)
		}
		if sc != nil && sc.IPStrategy != nil && len(sc.IPStrategy.ExcludedIPs) > 0 {
			t.differs(where+" ipStrategy", "excludedIPs skips addresses in X-Forwarded-For; in sluice they belong in identity.trusted_proxies.")
		}
	case sc.RequestHeaderName != "":
		h := http.CanonicalHeaderKey(sc.RequestHeaderName)
		if !slices.Contains(t.APIKeyHeaders, h) {
			t.APIKeyHeaders = append(t.APIKeyHeaders, h)
		}
		t.same(where+" source", "one bucket per value of %s, which sluice reads as an API key (hashed).", h)
		t.differs(where+" source", "requests without %s shared one bucket in Traefik; sluice limits each of them by address.", h)
	default:
		l.Global = true
		t.differs(where+" source", "requestHost kept one bucket per Host; sluice's global limit is one bucket for every host.")
	}
	t.Limits = append(t.Limits, l)
	return nil
}
