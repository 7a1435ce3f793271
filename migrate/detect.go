package migrate

import (
	"regexp"
	"slices"
	"strings"
)

// formatSign is a regular expression that matches the files of a format.
type formatSign struct {
	format string
	sign   *regexp.Regexp
}

// formatSigns are what each format's files hold and others do not, in
// YAML and, where the format is also written so (decK dumps, kubectl get
// -o json), in JSON.
var formatSigns = []formatSign{
	{FormatNginx, regexp.MustCompile(`(?m)^\s*limit_(req|conn)(_zone)?\s`)},
	// Also envoyproxy/ratelimit's rules in a ConfigMap's data, the
	// ConfigMap alone or among a List's items.
	{FormatEnvoy, regexp.MustCompile(`local_ratelimit\.v3\.LocalRateLimit|(?m)^domain:\s*\S|(?s)^(.*\n)?[ \t]*(-[ \t]+)?kind:\s*ConfigMap\s*\n.*\n\s+domain:\s*\S.*\n\s+descriptors:`)},
	{FormatKong, regexp.MustCompile(`(?m)^\s*-?\s*name:\s*["']?rate-limiting(-advanced)?["']?\s*$|(?m)^\s*plugin:\s*["']?rate-limiting(-advanced)?["']?\s*$|"(name|plugin)"\s*:\s*"rate-limiting(-advanced)?"`)},
	// In YAML, JSON (an object: API Gateway's "rateLimit" is a number),
	// or TOML, which Traefik reads too: a table ([http.middlewares.<name>.rateLimit],
	// or one below it) or a key given a value (rateLimit.average = 1,
	// <name>.rateLimit = {…}).
	{FormatTraefik, regexp.MustCompile(`(?m)^\s*(rateLimit|inFlightReq):|"(rateLimit|inFlightReq)"\s*:\s*\{|(?m)^\s*\[http\.middlewares\.\S+\.(rateLimit|inFlightReq)(\.\S+)?\]|(?m)^\s*(\S+\.)?(rateLimit|inFlightReq)(\.\S+)?\s*=`)},
	// A section's name is of the characters HAProxy allows in one, so
	// that nginx's "listen 80;" is not taken for a section; a listen
	// section may name its address, and a comment may end the line.
	{FormatHAProxy, regexp.MustCompile(`(?m)^\s*(frontend|backend|listen)\s+[A-Za-z0-9_.:-]+(\s+[^;\s#]+)?\s*(#.*)?$`)},
	{FormatIngressNginx, regexp.MustCompile(`nginx\.ingress\.kubernetes\.io/limit-(rps|rpm|connections)`)},
	{FormatAPIGateway, regexp.MustCompile(`"apiStages"\s*:|AWS::ApiGateway::UsagePlan`)},
	// Indented, as the items of a List (kubectl get -o yaml) are.
	{FormatEnvoyGateway, regexp.MustCompile(`(?m)^\s*(-\s+)?kind:\s*["']?BackendTrafficPolicy["']?\s*$|"kind"\s*:\s*"BackendTrafficPolicy"`)},
}

// Detect returns the format src is written in, when exactly one format's
// signs are in it: nginx's limit_req and limit_conn directives, an Envoy
// local rate limit or envoyproxy/ratelimit's domain, Kong's rate-limiting
// plugin (decK or KongPlugin), Traefik's rateLimit or inFlightReq middleware, HAProxy's sections, ingress-nginx's
// limit annotations, API Gateway's usage plans (the CLI's JSON or a
// CloudFormation template), Envoy Gateway's BackendTrafficPolicy. ok is false
// when none or several are, and the caller must be told the format.
func Detect(src string) (format string, ok bool) {
	var found []string
	for _, f := range formatSigns {
		if f.sign.MatchString(src) {
			found = append(found, f.format)
		}
	}
	// A BackendTrafficPolicy's rateLimit: is Traefik's sign too.
	if slices.Contains(found, FormatEnvoyGateway) {
		found = slices.DeleteFunc(found, func(f string) bool { return f == FormatTraefik })
	}
	if len(found) != 1 {
		return strings.Join(found, ", "), false
	}
	return found[0], true
}

// looksLike reports whether src holds the signs of format (see Detect).
func looksLike(src, format string) bool {
	i := slices.IndexFunc(formatSigns, func(f formatSign) bool { return f.format == format })
	return i >= 0 && formatSigns[i].sign.MatchString(src)
}
