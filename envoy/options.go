package envoy

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
)

// Options configure a Service. The zero value of every field is its
// documented default. Service.SetHeaders changes Headers and the three
// header names while the service serves; the other fields are fixed when
// NewService makes it.
type Options struct {
	// Headers is the mode of the RateLimit headers every response carries
	// in response_headers_to_add, which Envoy adds to the response sent
	// to the client (the upstream's, or its own 429), in any case:
	//
	// "ietf" (the default when empty; httplimit.ModeIETF):
	// draft-ietf-httpapi-ratelimit-headers-11, every enforced limit of
	// the request,
	//
	//	RateLimit-Policy: "per-ip";q=100;w=60, "login";q=5;w=60
	//	RateLimit: "per-ip";r=42;t=18, "login";r=4;t=18
	//
	// "draft-6" (httplimit.ModeDraft6): envoyproxy/ratelimit's headers
	// (LIMIT_RESPONSE_HEADERS_ENABLED; under their default names unless
	// LimitHeader, RemainingHeader or ResetHeader rename them) and a
	// policy, of the status envoyproxy/ratelimit's describe: the last one
	// OVER_LIMIT, else the one with the least limit_remaining (the first
	// of equals) among those with a current_limit, shadow, quota-mode and
	// requests_per_unit 0 ones included,
	//
	//	RateLimit-Limit: 5
	//	RateLimit-Remaining: 4
	//	RateLimit-Reset: 18
	//	RateLimit-Policy: 5;w=60
	//
	// or "none": no headers. Both modes add Retry-After (seconds, rounded
	// up, at least 1) to OVER_LIMIT responses, unless no wait can help (a
	// blocked descriptor, or a cost above a limit's capacity). The ietf
	// headers never show a shadow limit.
	Headers string
	// LimitHeader, RemainingHeader and ResetHeader rename draft-6's
	// RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset, as
	// envoyproxy/ratelimit's LIMIT_LIMIT_HEADER, LIMIT_REMAINING_HEADER
	// and LIMIT_RESET_HEADER do (e.g. "X-RateLimit-Limit"); empty, each
	// keeps its default name. A name is an HTTP token (a field name of RFC
	// 9110), written as given, and names no other header the service
	// adds (RateLimit-Policy, Retry-After, another of the three), in any
	// case. Only Headers "draft-6" writes them: with another mode they
	// must be empty.
	LimitHeader, RemainingHeader, ResetHeader string
	// Observer, when set, is called after every request, decided or not,
	// with the time the decision took (not counting a leaky-bucket queue's
	// wait): the hook for metrics. On error, res holds only Domain, and
	// err is the gRPC status Envoy is answered (status.FromError) wrapping
	// its cause, for errors.Is: the context's error when the caller left
	// before its decision (context.Canceled, context.DeadlineExceeded, as
	// Envoy's timeout is), the store's (sluice.ErrStoreUnavailable) when it
	// failed; a request that is invalid is InvalidArgument. It
	// runs on the request's goroutine, concurrently with other requests,
	// and must not keep res: the Service reuses its memory for later
	// requests (copy what you need).
	Observer func(res *Result, took time.Duration, err error)
	// Clock returns the time by which the service reckons the Unix windows
	// of fixed-window rules and their duration_until_reset; time.Now when
	// nil. The store decides by its own clock (Redis's, for the Redis
	// store), which should agree with it within a few seconds.
	Clock func() time.Time
	// Logger receives a warning, each time the service is given rules
	// (NewService, SetRules), for each link to nothing that loading them
	// skipped (Rules.Skipped), naming its path, and one when a request
	// refused for its deadline could not be given back (the store's
	// refund failed); slog.Default() when nil.
	Logger *slog.Logger
}

// modeNone sends no RateLimit headers.
const modeNone = "none"

// WithDefaults returns o with every empty field that has a default set to
// it, and Headers in lower case: the draft-6 header names only when
// Headers is "draft-6". It validates nothing.
func (o Options) WithDefaults() Options {
	o.Headers = strings.ToLower(o.Headers)
	if o.Headers == "" {
		o.Headers = modeIETF
	}
	if o.Headers == modeDraft6 {
		o.LimitHeader = cmp.Or(o.LimitHeader, headerLimit)
		o.RemainingHeader = cmp.Or(o.RemainingHeader, headerRemaining)
		o.ResetHeader = cmp.Or(o.ResetHeader, headerReset)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Validate reports every reason NewService would refuse o, each as a
// *FieldError, joined; nil when NewService accepts o. Empty fields are
// judged by their defaults.
func (o Options) Validate() error {
	o = o.WithDefaults()
	var errs []error
	switch o.Headers {
	case modeIETF, modeDraft6, modeNone:
	default:
		errs = append(errs, &FieldError{Field: "Headers",
			Err: fmt.Errorf("%q is not one of %s, %s, %s", o.Headers, modeIETF, modeDraft6, modeNone)})
	}
	names := []struct{ field, name string }{
		{"LimitHeader", o.LimitHeader}, {"RemainingHeader", o.RemainingHeader}, {"ResetHeader", o.ResetHeader},
	}
	for i, n := range names {
		var err error
		switch {
		case n.name == "":
			continue
		case o.Headers != modeDraft6:
			err = fmt.Errorf("renames a draft-6 header, but Headers is %q", o.Headers)
		case !validToken(n.name):
			err = fmt.Errorf("%q is not a valid header name", n.name)
		case slices.ContainsFunc(names[:i], func(m struct{ field, name string }) bool { return strings.EqualFold(m.name, n.name) }),
			strings.EqualFold(n.name, "RateLimit-Policy"), strings.EqualFold(n.name, "Retry-After"):
			err = fmt.Errorf("%q is the name of another header the service adds", n.name)
		default:
			continue
		}
		errs = append(errs, &FieldError{Field: n.field, Err: err})
	}
	return errors.Join(errs...)
}

// validToken reports whether s is an HTTP token (RFC 9110, section
// 5.6.2), as a header name must be.
func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

// A FieldError is one invalid field of Options.
type FieldError struct {
	// Field is the field's name in Options, e.g. "Headers".
	Field string
	// Err says what is wrong, without the field.
	Err error
}

// Error returns the problem with its field:
//
//	envoy: Options.Headers: "draft-7" is not one of ietf, draft-6, none
//
// A FieldError without Err says "invalid".
func (e *FieldError) Error() string {
	why := "invalid"
	if e.Err != nil {
		why = e.Err.Error()
	}
	return "envoy: Options." + e.Field + ": " + why
}

// Unwrap returns e.Err.
func (e *FieldError) Unwrap() error { return e.Err }
