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
func (d *decoder) rules(n *yaml.Node, path string, raw *rawConfig) []httplimit.Rule {
	var out []httplimit.Rule
	raw.at("Rules", n, path)
	d.List(n, path, func(i int, e *yaml.Node, path string) {
		var r httplimit.Rule
		at := fmt.Sprintf("Rules[%d]", len(out))
		counts := len(d.counts) // the rule's limits' count: settings start here
		var countNode *yaml.Node
		var count string
		raw.at(at, e, path)
		list := func(name string, dst *[]string) field {
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
		d.Mapping(e, path, map[string]field{
			"name": func(n *yaml.Node, p string) { r.Name = d.Str(n, p); raw.at(at+".Name", n, p) },
			"match": func(n *yaml.Node, p string) {
				d.Mapping(n, p, map[string]field{
					"methods":      list("Methods", &r.Methods),
					"paths":        list("Paths", &r.Paths),
					"except_paths": list("ExceptPaths", &r.ExceptPaths),
					"hosts":        list("Hosts", &r.Hosts),
					"plans":        list("Plans", &r.Plans),
					"headers": func(n *yaml.Node, p string) {
						d.List(n, p, func(j int, e *yaml.Node, p string) {
							var h httplimit.HeaderMatch
							d.Mapping(e, p, map[string]field{
								"name": func(n *yaml.Node, p string) {
									h.Name = d.Str(n, p)
									d.seenHeader(n, p, h.Name)
								},
								"value": func(n *yaml.Node, p string) { h.Value = d.Str(n, p) },
							})
							r.Headers = append(r.Headers, h)
							raw.at(fmt.Sprintf("%s.Headers[%d].Name", at, j), e, p)
						})
					},
				})
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
				r.Limits = d.limits(n, p)
				raw.at(at+".Limits", n, p)
				raw.refused(at+".Limits", len(d.Errs) > before)
			},
		})
		if !hasKey(e, "limits") && e.Kind == yaml.MappingNode {
			raw.at(at+".Limits", e, path+".limits")
		}
		for i := counts; i < len(d.counts); i++ {
			d.counts[i].name = r.Name + "." + d.counts[i].name
		}
		if countNode != nil {
			d.countOf(countNode, path+".count", r.Name, count, leasable(r.Limits...)...)
		}
		out = append(out, r)
	})
	return out
}
