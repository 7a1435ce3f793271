// Resolution of the whole file: defaults, plan names, and the options judged by their Validate.

package config

import (
	"cmp"
	"errors"
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/httplimit"
)

// resolve applies defaults, turns plan names into plans and has the
// middleware's and the Envoy service's options judged by the functions
// their New functions use, locating each problem in the file.
func (d *decoder) resolve(c *Config, raw *rawConfig, root *yaml.Node) {
	d.publicPathsDiffer(c, raw)
	d.listenersDiffer(c)
	if c.Response.DenyStatus == 0 {
		c.Response.DenyStatus = http.StatusTooManyRequests
	}
	if c.Store.Type == "" {
		d.store(nil, "store", &c.Store)
	}
	byName := d.resolvePlans(c, raw, root)
	d.emptyPlanNames(c, raw)
	for i, j := range c.Identity.JWT {
		if loc, ok := raw.locs[jwtPlanField(i)]; ok && byName[j.Plan] == nil {
			d.Errorf(loc.node, loc.path, "%q is not a plan", j.Plan)
		}
	}
	if loc, ok := raw.locs["TokenHeaders"]; ok && len(c.Identity.JWT) == 0 {
		d.Errorf(loc.node, loc.path, "tokens are read only to be verified: set identity.jwt too")
	}
	// Keys without a plan of their own take the default plan.
	defaults := httplimit.Options{Plans: c.Policy.Plans, DefaultPlan: c.Policy.DefaultPlan,
		AnonymousPlan: c.Policy.AnonymousPlan}.WithDefaults()
	c.Policy.DefaultPlan, c.Policy.AnonymousPlan = defaults.DefaultPlan, defaults.AnonymousPlan

	keys := d.resolveKeys(c, raw, byName)
	d.algorithmsAgree(&c.Store, raw)

	d.costsExempted(c, raw)
	d.ruleCostsHeld(c, raw)
	d.exceptPathsOverlap(c, raw)
	d.resolveCounts(c, raw)
	d.leaseBoundsApply(&c.Store)
	d.leasedCostsHeld(c, raw)
	o := c.httpLimitOptions(keys)
	d.locate(o.Validate(), raw, "")
	if c.Envoy.Enabled {
		d.locate(c.EnvoyOptions().Validate(), raw, envoyFields)
	}
	r := o.WithDefaults()
	id := &c.Identity
	id.APIKeyHeaders, id.ForwardedHeader, id.UnknownKeys = r.APIKeyHeaders, r.ForwardedHeader, r.UnknownKeys
	id.IPv4Prefix, id.IPv6Prefix = r.IPv4Prefix, r.IPv6Prefix
	c.Response.Headers = r.Headers
	if c.Envoy.Enabled {
		c.Envoy.Headers = c.EnvoyOptions().WithDefaults().Headers
	}
}

// emptyPlanNames refuses default_plan and anonymous_plan written as ""
// (as a template renders an unset value): "" names no plan, and read as
// the field left out it would put clients on another plan than the one
// the file was meant to name.
func (d *decoder) emptyPlanNames(c *Config, raw *rawConfig) {
	if len(raw.plans) == 0 {
		return // no plan at all: Plans's error says so
	}
	for _, f := range []struct{ field, name string }{{"DefaultPlan", c.Policy.DefaultPlan}, {"AnonymousPlan", c.Policy.AnonymousPlan}} {
		if loc, ok := raw.locs[f.field]; ok && f.name == "" && written(loc.node) {
			d.Errorf(loc.node, loc.path, "\"\" is not a plan (plans: %s): name one, or remove the line", planNames(raw.plans))
		}
	}
}

// locate reports every field error in err at the place its field was read
// from (raw.locs, under prefix): the field's own, else its nearest
// enclosing field's. A problem at a place that already has one (a value the
// decoder refused), or of a field the decoder refused part of, is left out.
func (d *decoder) locate(err error, raw *rawConfig, prefix string) {
	if err == nil {
		return
	}
	type place struct {
		file      string
		line, col int
	}
	taken := map[place]bool{} // the places of the problems the decoder found, in any file
	for _, e := range Errors(errors.Join(d.Errs...)) {
		taken[place{e.File, e.Line, e.Col}] = true
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		field, msg := fieldOf(e)
		if raw.isPartial(prefix + field) {
			continue
		}
		loc, ok := location{}, false
		for f := field; f != "" && !ok; f = parentField(f) {
			loc, ok = raw.locs[prefix+f]
		}
		if loc.node != nil && taken[place{cmp.Or(loc.file, d.File), loc.node.Line, loc.node.Column}] {
			continue
		}
		if field == "Plans" {
			msg += " (see examples/sluice.yaml)"
		}
		d.errorfIn(loc.file, loc.node, loc.path, "%s", msg)
	}
}
