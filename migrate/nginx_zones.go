package migrate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// zoneArg and rateArg read a zone directive's zone=name:size and
// limit_req_zone's rate=Nr/s or Nr/m arguments.
var (
	zoneArg = regexp.MustCompile(`^zone=([^:]+):(\d+[kKmMgG]?)$`)
	rateArg = regexp.MustCompile(`^rate=(\d{1,9})r/([sm])$`)
)

func parseZone(d directive) (*nginxZone, error) {
	z := &nginxZone{line: d.line}
	if len(d.args) < 3 {
		return nil, fmt.Errorf("line %d: limit_req_zone wants a key, zone=name:size and rate=Nr/s", d.line)
	}
	z.key = d.args[0]
	for _, a := range d.args[1:] {
		if m := zoneArg.FindStringSubmatch(a); m != nil {
			z.name, z.size = m[1], m[2]
		} else if m := rateArg.FindStringSubmatch(a); m != nil {
			z.quantity, _ = strconv.ParseInt(m[1], 10, 64)
			z.window = time.Second
			if m[2] == "m" {
				z.window = time.Minute
			}
		} else if a == "sync" {
			z.sync = true
		} else {
			return nil, fmt.Errorf("line %d: limit_req_zone: cannot read %s", d.line, excerpt(a))
		}
	}
	if z.name == "" || z.quantity < 1 {
		return nil, fmt.Errorf("line %d: limit_req_zone wants zone=name:size and a rate of at least 1r/s or 1r/m", d.line)
	}
	return z, nil
}

// parseConnZone reads a limit_conn_zone: a key and zone=name:size.
func parseConnZone(d directive) (*nginxZone, error) {
	if len(d.args) != 2 {
		return nil, fmt.Errorf("line %d: limit_conn_zone wants a key and zone=name:size", d.line)
	}
	m := zoneArg.FindStringSubmatch(d.args[1])
	if m == nil {
		return nil, fmt.Errorf("line %d: limit_conn_zone: cannot read %s", d.line, excerpt(d.args[1]))
	}
	return &nginxZone{line: d.line, key: d.args[0], conn: true, name: m[1], size: m[2]}, nil
}

// parseConnUse reads a limit_conn: a zone and a number of requests.
func parseConnUse(d directive) (nginxUse, error) {
	if len(d.args) != 2 {
		return nginxUse{}, fmt.Errorf("line %d: limit_conn wants a zone and a number", d.line)
	}
	n, err := strconv.ParseInt(d.args[1], 10, 64)
	if err != nil || n < 1 || n > 1e9 {
		return nginxUse{}, fmt.Errorf("line %d: limit_conn: %s is not a number of connections", d.line, excerpt(d.args[1]))
	}
	return nginxUse{zone: d.args[0], conn: true, n: n, line: d.line}, nil
}

func parseUse(d directive) (nginxUse, error) {
	u := nginxUse{line: d.line, delay: -1}
	for _, a := range d.args {
		k, v, _ := strings.Cut(a, "=")
		var err error
		switch k {
		case "zone":
			u.zone = v
		case "burst":
			u.burst, err = strconv.ParseInt(v, 10, 64)
		case "delay":
			if u.delay, err = strconv.ParseInt(v, 10, 64); err == nil && u.delay < 0 {
				err = fmt.Errorf("negative") // nginx refuses it: invalid delay
			}
		case "nodelay":
			u.nodelay = v == "" && a == "nodelay"
			if !u.nodelay {
				err = fmt.Errorf("bad")
			}
		default:
			err = fmt.Errorf("unknown")
		}
		if err != nil || u.burst < 0 || u.burst > 1e9 || u.delay > 1e9 {
			return u, fmt.Errorf("line %d: limit_req: cannot read %s", d.line, excerpt(a))
		}
	}
	if u.zone == "" {
		return u, fmt.Errorf("line %d: limit_req needs zone=name", d.line)
	}
	if u.nodelay && u.delay >= 0 {
		return u, fmt.Errorf("line %d: limit_req: nodelay and delay= together", d.line)
	}
	if u.delay < 0 {
		u.delay = 0
	}
	return u, nil
}

// zoneStates estimates the states an nginx zone of size holds (one state
// is about 64 bytes, the figure nginx's documentation gives for
// $binary_remote_addr on 64-bit platforms).
func zoneStates(size string) int64 {
	mult := int64(1)
	switch size[len(size)-1] {
	case 'k', 'K':
		mult, size = 1<<10, size[:len(size)-1]
	case 'm', 'M':
		mult, size = 1<<20, size[:len(size)-1]
	case 'g', 'G':
		mult, size = 1<<30, size[:len(size)-1]
	}
	n, _ := strconv.ParseInt(size, 10, 64)
	return n * mult / 64
}
