// Package envoyparity holds the test that runs envoyproxy/ratelimit and
// sluice's Envoy rate limit service side by side, on one real Redis and
// one folder of rules, and requires the same answer from both on every
// call of envoyproxy/ratelimit's own integration scenarios (and of the
// scenarios that its differences from sluice were found with).
//
// The test builds envoyproxy/ratelimit's service_cmd from the Go module
// proxy at the version RatelimitVersion names, and sluice's own binary,
// and starts redis-server (Debian's redis-server package: make deps).
// It runs envoyproxy/ratelimit twice: as it is configured by default,
// and with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT, its setting that
// charges nothing to the descriptors of a refused request except the
// refused ones. Every answer of sluice must equal the second's, but for
// the calls that name a difference documented in docs/envoy.md; an answer
// may differ from the first's only where sluice's one deliberate
// difference, the all-or-nothing rule, applies.
package envoyparity

// RatelimitVersion is the envoyproxy/ratelimit module version the test
// builds and compares against (the project publishes pseudo-versions only).
const RatelimitVersion = "v1.4.1-0.20260122083618-3fb702589d36"
