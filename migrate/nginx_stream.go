package migrate

import (
	"errors"
	"fmt"
	"strings"
)

// nginxStreamLimit reports whether directive name limits where a stream
// block holds it: limit_conn and limit_conn_zone (nginx's stream module
// limits TCP and UDP connections by them), or limit_req and
// limit_req_zone, which nginx refuses there and which are named all the
// same.
func nginxStreamLimit(name string) bool {
	switch name {
	case "limit_conn", "limit_conn_zone", "limit_req", "limit_req_zone":
		return true
	}
	return false
}

// nginxStreamLimits returns the limiting directives of stream block d and
// of the blocks in it, each as "line N: limit_conn tcp 2".
func nginxStreamLimits(d directive) []string {
	var out []string
	for _, e := range d.block {
		switch {
		case e.hasBlock:
			out = append(out, nginxStreamLimits(e)...)
		case nginxStreamLimit(e.name):
			out = append(out, fmt.Sprintf("line %d: %s %s", e.line, e.name, excerpt(strings.Join(e.args, " "))))
		}
	}
	return out
}

// nginxStream reports the limits of stream block d as not imported: they
// count TCP and UDP connections, which sluice, a limiter of HTTP
// requests, does not see. It returns them (nginxStreamLimits).
func (t *Translation) nginxStream(d directive) []string {
	ls := nginxStreamLimits(d)
	if len(ls) > 0 {
		t.differs(fmt.Sprintf("line %d stream", d.line), "nginx's stream module limits TCP and UDP connections (%s); sluice limits HTTP requests and never sees those connections: not imported. Keep these limits in nginx.", fewOf(ls, "; "))
	}
	return ls
}

// nginxNothing is the error of a file whose http blocks use no limit_req or
// limit_conn that sluice imports. It names the limits found elsewhere
// (streams: those of its stream blocks, nginxStreamLimits) and the
// locations whose limits could not be imported, as the report would have.
func (t *Translation) nginxNothing(streams []string) error {
	const nothing = "no limit_req or limit_conn in an http block, server or prefix location of this file: nothing to import"
	var why []string
	if len(streams) > 0 {
		why = append(why, "stream: "+fewOf(streams, "; ")+": these limit TCP and UDP connections, which sluice does not")
	}
	for _, d := range t.Differences {
		if !d.Same && strings.HasPrefix(d.Where, "location ") && strings.Contains(d.Text, "not imported") && len(why) < 3 {
			why = append(why, d.Where+": "+d.Text)
		}
	}
	if len(why) == 0 {
		return errors.New(nothing)
	}
	return fmt.Errorf("%s (%s)", nothing, strings.Join(why, "; "))
}
