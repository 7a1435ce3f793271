// Package grpclimit limits gRPC calls with sluice, on both sides.
//
// On a server, Server's interceptors decide every call with a
// sluice.Limiter by the same plans, keys and identity rules as the HTTP
// middleware (httplimit.Options): the client is identified by an API key in
// its metadata (authorization: Bearer, x-api-key, or any configured key),
// by the user a bearer token names when Limits.Tokens verifies it (package
// jwt), by a user id set by a trusted front, or by its peer address (forwarded
// metadata believed only from trusted peers); the call's endpoint is its
// full method ("/pkg.Service/Method"), which plan costs and exemptions name
// as ServeMux patterns do. A refusal is the standard gRPC error model:
//
//	code:    RESOURCE_EXHAUSTED
//	message: Rate limit exceeded: 10 requests per second on the free plan. …
//	details: google.rpc.RetryInfo    retry_delay: the exact wait (absent when no wait can help)
//	         google.rpc.QuotaFailure one violation per limit exceeded: subject, limit, description
//	         google.rpc.Help         the plan's upgrade and the documentation, when configured
//
// (UNAVAILABLE, with the same details, for a refusal by the global limits
// alone when Limits.GlobalStatus is 503: the service is at its limit),
// and every decided call, admitted or refused, carries the RateLimit
// fields in its trailing metadata (ratelimit-policy, ratelimit, and on a
// refusal retry-after), in the header modes configured; an admitted
// stream carries them in its header metadata too. A refusal carries
// grpc-retry-pushback-ms as well, the one word of the server that gRPC's
// own retries (a service config's retryPolicy) heed: RetryInfo's delay in
// whole milliseconds (spread under Limits.RetryJitter, as those retries
// add no jitter), or -1, do not retry, when no retry before the call's
// deadline can be admitted (see PushbackOf).
//
// On a client, Retry retries calls refused with RESOURCE_EXHAUSTED (or by
// a limiter with UNAVAILABLE) after their RetryInfo's delay (bounded,
// jittered, within the context's deadline), and Pacer learns the server's quota from those fields (in the
// trailers, or in the header as sluice serve's proxy sends them too) and holds
// calls that would not fit, as client.Transport does for HTTP.
//
// docs/grpc.md describes both sides, and sluice serve's proxy in front of
// a gRPC service.
package grpclimit
