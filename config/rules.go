package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sluice-dev/sluice/httplimit"
)

// rules decodes the rules section, in order, into httplimit.Rule values,
// recording where each field was read; httplimit's Validate judges them:
//
//	rules:
//	  - name: uploads
//	    match:
//	      methods: [POST]
//	      paths: ["/v1/tenants/{tenant}/uploads/"]
//	      except_paths: ["/v1/tenants/{tenant}/uploads/status"]   # left out
//	      hosts: [api.example.com, "*.example.net"]
//	      headers: [{name: X-Beta, value: "1"}, {name: X-Trace}]
//	      plans: [free]         # clients of these plans only; default: every plan
//	    key: [path:tenant]      # client (default), api_key, user, ip, ip/24,
//	                            # ip/24/48, header:<name>, host, path, path:<wildcard>,
//	                            # query:<name>, cookie:<name>, form:<name>,
//	                            # json:<path>, claim:<name>, route, rule
//	    header_from: trusted_proxies   # or any
//	    fallback: ip            # or shared, skip
//	    cost: 1                 # default: the request's cost
//	    count: failures         # or successes, all (default), header:<Name>; a limit's own count: wins
//	    limits:
//	      - {name: per-minute, algorithm: fixed-window, quantity: 10, window: 1m}
//
// match may instead be a list of such mappings, without plans (the rule's,
// given once beside match:), into httplimit.Rule.Any: a request is the
// rule's when any one of them matches it, one count for all:
//
//	rules:
//	  - name: api
//	    match:
//	      - {hosts: [a.example], paths: [/orders]}
//	      - {hosts: [b.example], paths: [/billing]}
//	    plans: [free]
//
// except: lists requests the rule leaves out, whichever alternative
// matched them, into httplimit.Rule.Except: mappings of methods, paths,
// hosts and headers, all that an entry names matching (no plans, no
// except_paths):
//
//	rules:
//	  - name: api
//	    match: {paths: [/api/]}
//	    except:
//	      - {methods: [OPTIONS]}                          # CORS preflights
//	      - {hosts: [b.example], paths: [/api/health]}    # /api/health on b.example only
func (d *decoder) rules(n *yaml.Node, path string, raw *rawConfig) []httplimit.Rule {
	var out []httplimit.Rule
	raw.at("Rules", n, path)
	d.List(n, path, func(i int, e *yaml.Node, path string) {
		var r httplimit.Rule
		at := fmt.Sprintf("Rules[%d]", len(out))
		counts := len(d.counts) // the rule's limits' count: settings start here
		var countNode *yaml.Node
		var count string
		// matchPlans is the node of match.plans, plansNode that of the
		// rule's plans: (one of them at most).
		var matchPlans, plansNode *yaml.Node
		var plansPath string
		var rulePlans []string
		// idPrefix is what the store's IDs of the rule's limits start
		// with (see limitsUnder): its name is read before its limits,
		// wherever the mapping puts them.
		var idPrefix string
		if name := valueOf(e, "name"); e.Kind == yaml.MappingNode && name != nil && name.Kind == yaml.ScalarNode {
			idPrefix = name.Value + "."
		}
		raw.at(at, e, path)
		// listAt is the field of a list of strings, recorded under at:
		// the rule's or an alternative's.
		listAt := func(at string) func(name string, dst *[]string) field {
			return func(name string, dst *[]string) field {
				return func(n *yaml.Node, p string) {
					d.List(n, p, func(j int, e *yaml.Node, p string) {
						s := d.Str(e, p)
						if name == "Methods" {
							d.method(e, p, s)
						}
						if header, ok := strings.CutPrefix(s, httplimit.KeyHeader); ok && name == "Key" {
							d.seenHeader(e, p, header)
						}
						*dst = append(*dst, s)
						raw.at(fmt.Sprintf("%s.%s[%d]", at, name, j), e, p)
					})
					raw.at(at+"."+name, n, p)
				}
			}
		}
		list := listAt(at)
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { r.Name = d.Str(n, p); raw.at(at+".Name", n, p) },
			"match": func(n *yaml.Node, p string) {
				if d.emptyMatch(n, p, "empty", "leave match: out to match every request") {
					return
				}
				if n.Kind != yaml.SequenceNode {
					d.Mapping(n, p, d.matchFields(raw, &r, &r.Methods, &r.Paths, &r.ExceptPaths, &r.Hosts, &r.Headers, at, list, &matchPlans))
					return
				}
				if len(n.Content) == 0 {
					d.Errorf(n, p, "an empty list of alternatives matches no request: give at least one, or leave match: out to match every request")
					return
				}
				raw.at(at+".Any", n, p)
				r.Any = make([]httplimit.Match, len(n.Content))
				d.List(n, p, func(k int, e *yaml.Node, p string) {
					if d.emptyMatch(e, p, "an empty alternative", "remove the line") {
						return
					}
					m := &r.Any[k]
					aat := fmt.Sprintf("%s.Any[%d]", at, k)
					raw.at(aat, e, p)
					d.Mapping(e, p, d.matchFields(raw, &r, &m.Methods, &m.Paths, &m.ExceptPaths, &m.Hosts, &m.Headers, aat, listAt(aat), nil))
				})
			},
			"except": func(n *yaml.Node, p string) {
				raw.at(at+".Except", n, p)
				d.List(n, p, func(k int, e *yaml.Node, p string) {
					r.Except = append(r.Except, httplimit.Match{})
					m := &r.Except[len(r.Except)-1]
					eat := fmt.Sprintf("%s.Except[%d]", at, k)
					raw.at(eat, e, p)
					fields := d.matchFields(raw, &r, &m.Methods, &m.Paths, &m.ExceptPaths, &m.Hosts, &m.Headers, eat, listAt(eat), nil)
					fields["plans"] = func(n *yaml.Node, p string) {
						d.Errorf(n, p, "plans: is the rule's, not an except entry's (give it once, beside match:)")
					}
					fields["except_paths"] = func(n *yaml.Node, p string) {
						d.Errorf(n, p, "an except entry has no except_paths of its own: what it leaves out is what its methods, paths, hosts and headers match")
					}
					d.Mapping(e, p, fields)
				})
			},
			"plans": func(n *yaml.Node, p string) {
				plansNode, plansPath = n, p
				d.emptyPlans(n, p)
				list("Plans", &rulePlans)(n, p)
			},
			"key": list("Key", &r.Key),
			"header_from": func(n *yaml.Node, p string) {
				r.HeaderFrom = d.Str(n, p)
				raw.at(at+".HeaderFrom", n, p)
			},
			"fallback": func(n *yaml.Node, p string) { r.Fallback = d.Str(n, p); raw.at(at+".Fallback", n, p) },
			"count":    func(n *yaml.Node, p string) { count, countNode = d.countValue(n, p), n },
			"cost": func(n *yaml.Node, p string) {
				c := d.Int(n, p, 0, 1<<40)
				r.Cost = &c
				raw.at(at+".Cost", n, p)
			},
			"limits": func(n *yaml.Node, p string) {
				before := len(d.Errs)
				r.Limits = d.limitsUnder(n, p, idPrefix)
				raw.at(at+".Limits", n, p)
				raw.refused(at+".Limits", len(d.Errs) > before)
				raw.eachAt(at+".Limits", n, p, len(d.Errs) > before)
			},
		})
		switch {
		case matchPlans != nil && plansNode != nil:
			d.Errorf(plansNode, plansPath, "given twice, here and in match: (give plans: once, beside match:)")
		case plansNode != nil:
			r.Plans = rulePlans
		}
		if !hasKey(e, "limits") && e.Kind == yaml.MappingNode {
			raw.at(at+".Limits", e, path+".limits")
		}
		for i := counts; i < len(d.counts); i++ {
			d.counts[i].name = r.Name + "." + d.counts[i].name
		}
		if countNode != nil {
			d.countOf(countNode, path+".count", r.Name, count, leasable(idPrefix, r.Limits...)...)
		}
		out = append(out, r)
	})
	return out
}

// matchFields returns the fields of one match: mapping, whose lists go to
// the slices given and are recorded in raw under at (list makes a list's
// field), methods, paths, hosts and plans refused empty (any one of none
// would match nothing, and an empty list reads as every one);
// plans, when matchPlans is not nil, is read into r.Plans and its node put
// in *matchPlans, and refused otherwise, as one alternative's.
func (d *decoder) matchFields(raw *rawConfig, r *httplimit.Rule, methods, paths, exceptPaths, hosts *[]string, headers *[]httplimit.HeaderMatch,
	at string, list func(string, *[]string) field, matchPlans **yaml.Node) map[string]field {
	plans := func(n *yaml.Node, p string) {
		d.Errorf(n, p, "plans: is the rule's, not an alternative's: it says whose requests the rule counts, "+
			"the same for every alternative (give it once, beside match:)")
	}
	if matchPlans != nil {
		plans = func(n *yaml.Node, p string) {
			*matchPlans = n
			d.emptyPlans(n, p)
			list("Plans", &r.Plans)(n, p)
		}
	}
	// nonEmpty is list's field of name (key in the file), refused empty.
	nonEmpty := func(name, key, every string, dst *[]string) field {
		return func(n *yaml.Node, p string) {
			d.emptyList(n, p, every, "list the "+key+" to match, or leave "+key+" out")
			list(name, dst)(n, p)
		}
	}
	return map[string]field{
		"methods":      nonEmpty("Methods", "methods", "every method", methods),
		"paths":        nonEmpty("Paths", "paths", "every path", paths),
		"except_paths": list("ExceptPaths", exceptPaths),
		"hosts":        nonEmpty("Hosts", "hosts", "every host", hosts),
		"plans":        plans,
		"headers": func(n *yaml.Node, p string) {
			d.List(n, p, func(j int, e *yaml.Node, p string) {
				var h httplimit.HeaderMatch
				d.Mapping(e, p, map[string]field{
					"name": func(n *yaml.Node, p string) {
						h.Name = d.Str(n, p)
						d.seenHeader(n, p, h.Name)
					},
					"value": func(n *yaml.Node, p string) {
						// Matched but for the whitespace around it (a block
						// scalar's newline); whitespace alone is left for
						// httplimit to refuse, never read as "present".
						h.Value = d.Str(n, p)
						if v := strings.TrimSpace(h.Value); v != "" {
							h.Value = v
						}
					},
				})
				*headers = append(*headers, h)
				raw.at(fmt.Sprintf("%s.Headers[%d].Name", at, j), e, p)
			})
		},
	}
}

// emptyMatch refuses n, a match: or one of its alternatives (what names
// it in the message), when it is nothing (null, as a line commented out
// or a template's empty value leaves it) or {}: it would match every
// request, the rule's widest reading; instead says what to write for
// that. It reports whether n was refused.
func (d *decoder) emptyMatch(n *yaml.Node, path, what, instead string) bool {
	if n.Tag != "!!null" && (n.Kind != yaml.MappingNode || len(n.Content) > 0) {
		return false
	}
	d.Errorf(n, path, "%s, it would match every request: give the methods, paths, hosts or headers to match, or %s", what, instead)
	return true
}

// emptyPlans refuses n, a rule's plans:, when it is an empty list, read as
// plans: left out: the rule would count the clients of every plan.
func (d *decoder) emptyPlans(n *yaml.Node, path string) {
	d.emptyList(n, path, "every plan", "list the plans whose clients the rule counts, or leave plans out")
}
