package server

import (
	"strings"

	"github.com/sluice-dev/sluice/config"
	"github.com/sluice-dev/sluice/httplimit"
)

// docsCounted is a limit that counts requests by their answer, as /docs
// tells it: one line each.
type docsCounted struct {
	Name, What, Back string
}

// describeCounts tells which of the limits that apply on plan p (its own,
// the global ones, the rules') count only some answers (config count:).
func describeCounts(cfg *config.Config, p *httplimit.Plan) []docsCounted {
	if len(cfg.Count) == 0 {
		return nil
	}
	var out []docsCounted
	add := func(name, rule string) {
		count, ok := cfg.Count[name]
		if !ok && rule != "" {
			count = cfg.Count[rule]
		}
		switch {
		case count == httplimit.CountFailures:
			out = append(out, docsCounted{Name: name, What: "only requests answered with an error (status 400 or above)",
				Back: "a successful request's units come back once it is answered"})
		case count == httplimit.CountSuccesses:
			out = append(out, docsCounted{Name: name, What: "only requests answered successfully (status below 400)",
				Back: "a request answered with an error gets its units back once it is answered"})
		case strings.HasPrefix(count, httplimit.CountStatus):
			out = append(out, docsCounted{Name: name, What: "only requests answered with status " + strings.ReplaceAll(count[len(httplimit.CountStatus):], ",", ", "),
				Back: "any other request's units come back once it is answered"})
		case strings.HasPrefix(count, httplimit.CountHeader):
			out = append(out, docsCounted{Name: name, What: "what you used, as the answer's " + count[len(httplimit.CountHeader):] + " header (or trailer) reports",
				Back: "a request is charged its cost when it is admitted, and what it did not use comes back once it is answered (an answer that reports nothing counts the whole cost)"})
		}
	}
	for _, l := range p.Limits {
		add(l.Name(), "")
	}
	for _, l := range cfg.Policy.Global {
		add(l.Name(), "")
	}
	for _, r := range cfg.Rules {
		if !r.AppliesTo(p.Name) {
			continue
		}
		for _, l := range r.Limits {
			add(r.Name+"."+l.Name(), r.Name)
		}
	}
	return out
}
