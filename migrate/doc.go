// Package migrate translates the rate limits teams already run into a
// sluice configuration that keeps their behaviour, and says precisely where
// sluice will behave differently. It reads eight formats:
//
//   - nginx: limit_req_zone and limit_req (burst, nodelay, delay),
//     limit_req_status and limit_req_dry_run (Nginx);
//   - envoyproxy/ratelimit's YAML descriptors (Envoy), which sluice's Envoy
//     rate limit service reads as they are, or Envoy's HTTP local rate
//     limit filter in an Envoy or Istio configuration (EnvoyLocal);
//   - Kong's rate-limiting and rate-limiting-advanced plugins in a decK file
//     or in the Kong Ingress Controller's resources (Kong);
//   - Traefik's rateLimit and inFlightReq middlewares, in a file-provider
//     YAML or a Kubernetes Middleware resource (Traefik);
//   - HAProxy's stick tables of http_req_rate or conn_cur, their track-sc
//     actions and the http-request deny or tcp-request reject rules that
//     compare them (HAProxy);
//   - ingress-nginx's rate-limit annotations on Kubernetes Ingresses
//     (IngressNginx), which the controller writes as nginx zones;
//   - Amazon API Gateway's usage plans (APIGateway): throttles, quotas and
//     method throttles, as the AWS CLI prints them;
//   - Envoy Gateway's BackendTrafficPolicy rate limits (EnvoyGateway), with
//     the Gateway API HTTPRoutes they target.
//
// Each returns a Translation: the limits, identity and costs it found, and
// a Difference for every place the semantics differ — or, marked Same, where
// they are the same and why. Translation.Files writes the configuration
// (with every limit in shadow mode unless asked to enforce, so that the
// first rollout only reports) and Translation.Report the analysis a person
// reads: what was found, the translation, the rollout (shadow first, the
// metrics to watch), the differences, and what to do next.
//
// # Equivalences
//
// nginx's limit_req is a leaky bucket counted in thousandths of a request
// at millisecond resolution: a request is admitted when the bucket's excess
// after it, its previous excess drained at the rate plus one, is at most
// burst; the first request of an idle key leaves an excess of 0. That is a
// bucket of burst+1 requests draining at the rate, so with nodelay it is
// sluice's gcra of the rate with burst+1, deciding the same requests. Without
// nodelay nginx admits the same requests but holds each until its excess
// above delay has drained: sluice's leaky-bucket queue of burst delay+1 and
// max_wait (burst-delay)/rate admits the same requests after the same waits.
//
// Traefik's middleware is golang.org/x/time/rate: a token bucket of burst
// refilled at average/period, which holds a request rather than refusing it
// when its token comes within a short maximum delay; sluice's leaky-bucket
// queue with that max_wait. Kong's rate-limiting and envoyproxy/ratelimit
// count fixed windows aligned to the clock: sluice's fixed-window.
// Envoy's local rate limit is a token bucket refilled continuously
// (since Envoy 1.31) and starting full: sluice's token-bucket.
// HAProxy's http_req_rate is the current period's count plus the previous
// period's weighted by the share of it still inside the last period,
// rounded down: sluice's sliding-window-counter. API Gateway's throttle is
// a token bucket of burstLimit refilled at rateLimit a second, starting
// full: sluice's token-bucket, the rate kept exact as a fraction.
//
// Parsers never panic on any input and return an error naming the line of
// the first thing they cannot read.
package migrate
