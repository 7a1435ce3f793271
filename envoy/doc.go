// Package envoy serves Envoy's global rate limit protocol (RLS v3,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit) on top of a
// sluice.Limiter, configured with envoyproxy/ratelimit's YAML descriptor
// format, so that an Envoy user can point the ratelimit filter at sluice
// without rewriting a rule — and give any rule any sluice algorithm.
//
// # Rules
//
// LoadRules reads envoyproxy/ratelimit's configuration: a domain and a tree
// of descriptors, each a key with an optional value, an optional rate_limit
// and nested descriptors. A rate_limit may carry three sluice extensions:
//
//	domain: edge
//	descriptors:
//	  - key: remote_address            # every client address: 100 per minute
//	    rate_limit: {unit: minute, requests_per_unit: 100}
//	    descriptors:
//	      - key: path
//	        value: /login              # ...and 5 logins per minute each
//	        rate_limit:
//	          unit: minute
//	          requests_per_unit: 5
//	          algorithm: sliding-window-log   # sluice: any algorithm (default fixed-window)
//	  - key: api_key
//	    rate_limit:
//	      unit: second
//	      requests_per_unit: 10
//	      algorithm: token-bucket
//	      burst: 50                    # sluice: bucket size (token-bucket, leaky-bucket, gcra)
//	  - key: tenant
//	    rate_limit:
//	      unit: second
//	      requests_per_unit: 100
//	      algorithm: leaky-bucket
//	      max_wait: 500ms              # sluice: queue up to 500ms instead of refusing
//
// Units are second, minute, hour, day, week, month (30 days) and year (365
// days), in any case. A fixed window (the default algorithm, and
// envoyproxy/ratelimit's only one) counts envoyproxy/ratelimit's windows:
// unit-length from the Unix epoch, so a day starts at midnight UTC and a
// week on a Thursday. A week, month or year is kept under a key naming its
// Unix window, in the shortest sluice fixed window (of at most
// sluice.MaxFixedWindow) found that holds it, so that the key is kept
// little longer than its window; one exists for every Unix window that
// starts after sluice.Epoch. Other algorithms align their windows to sluice.Epoch (at
// midnight UTC, like the Unix epoch, for every unit up to a day). Loading
// is strict:
// unknown fields, wrong types, duplicate siblings, duplicate domains and
// settings that would have no effect are errors that name file:line:col
// and the field path (*Error values), all reported at once. Anchors,
// aliases, merge keys (<<: *defaults) and YAML 1.1 booleans (yes, on,
// True, ...) are read as envoyproxy/ratelimit's YAML library reads them,
// into its structs: a rate_limit written after a merge key (or in a later
// mapping of a merge list) changes only the fields it names, keeping the
// merged rate_limit's others (its name too), and a null one removes it. A
// key written before a merge key that sets it too is an error, as YAML
// readers disagree on which of the two it is.
//
// Every field of envoyproxy/ratelimit's format is read with its meaning:
// shadow_mode (decided and counted, never refuses), quota_mode (reported
// OK when over, with limit_remaining 0 and no duration_until_reset, never
// refuses), share_threshold (on a value ending in "*": every value it
// matches counts in one limit; on a key ending in "*" without a value: one
// limit per entry key it matches, for all that key's values), unlimited,
// replaces and name.
// detailed_metric and value_to_metric are accepted and have no effect:
// sluice labels metrics by limit name, never by descriptor value. The
// concurrency algorithm is refused: it needs a release when a request
// ends, which RLS never sends.
//
// # Limit names
//
// A rule's limit is called by its rate_limit.name: it is the name in
// RateLimit headers, in observers' outcomes and in metrics. A rule without
// one (or with name: "") is named after its path in the tree: "key" or
// "key_value" per level, joined by '.', other bytes replaced by '_' — key
// remote_address then key path with value /login gives
// "remote_address.path_login" — and cut to 64 bytes with a hash suffix when
// longer. envoyproxy/ratelimit takes any text as a name; one that is not a
// sluice limit name (1-64 of A-Z a-z 0-9 . _ -) is made one the same way
// ("Per user" calls the limit "Per_user"). current_limit.name echoes
// rate_limit.name only, as written, as envoyproxy/ratelimit does, and
// replaces names limits as written. A limit override is named "override-"
// and its window's name, e.g. "override-per-minute".
//
// # Matching
//
// Matching is envoyproxy/ratelimit's. For each descriptor of a request the
// domain's tree is walked one entry at a time; at each level the child with
// the entry's key and value wins, then a child whose value ends in "*" and
// prefixes the entry's value, or a child without a value whose key ends in
// "*" and prefixes the entry's key, "_" and value as one string (key:
// user* matches user_id = 42, as in envoyproxy/ratelimit), the first of
// them in file order, then the child with the key and no value (a
// wildcard). The descriptor is limited by the rate_limit
// of the node its last entry reaches. A descriptor that goes deeper than
// the tree, ends on a node without rate_limit, or has an entry that no child
// matches has no limit.
// A descriptor's optional limit override (sent by Envoy's route
// configuration) replaces the configured rule, as a fixed window, when the
// domain is known; an override whose unit_multiplier is above
// MaxOverrideMultiplier is InvalidArgument.
//
// # Decisions
//
// Every limited descriptor of one request becomes one sluice.Check — its key
// is the domain and the descriptor's entries, its cost the descriptor's
// hits_addend if set (0 is a peek), else the request's (0 or unset means 1) —
// and all of them are decided in a single Limiter.Allow call (a request that
// peeks at more fixed windows than that call holds with their over-limit
// records peeks at the rest in a call before it). That is the one
// deliberate difference from envoyproxy/ratelimit, which by default
// increments every descriptor's counter on its own: in sluice a request that
// is over any limit consumes nothing from the others, so a client refused by
// a per-second limit does not also burn its per-hour quota on requests that
// never reached the upstream. (envoyproxy/ratelimit does much the same
// with STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT set, and sluice answers as
// it then does, but for a request over a shadow or quota_mode limit only,
// whose other descriptors sluice charges, and one over only because
// descriptors of one count — identical ones, or values that
// share_threshold counts together — do not fit in it together where each
// alone would, whose other descriptors envoyproxy/ratelimit charges, as it
// tells each descriptor's fate from its own cost, and sluice does not.)
// Two identical descriptors in one request share one check,
// with their costs added, and each is reported as envoyproxy/ratelimit
// counts them, in turn: with the limit_remaining after its own cost and
// those of the ones before it, and in a fixed window that cannot hold them
// all, OVER_LIMIT from the first that does not fit. Identical descriptors
// with limit overrides of one window but different quantities share the
// count too, and each is decided against its own quantity: the request
// is admitted only when each of them, in turn, fits its own.
//
// A fixed window answers as envoyproxy/ratelimit's, which counts every hit,
// even a refused one: a request it refuses spends what is left of the
// window, so the window stays over its limit until it ends (hits_addend
// above the limit included), and a later peek at it is OVER_LIMIT and
// refuses its request. An OVER_LIMIT status reports limit_remaining 0, and
// duration_until_reset is never 0 on one: for a fixed window it is the
// whole seconds to the end of its Unix window (for requests_per_unit 0 too),
// for other algorithms at least the wait after which the request would be
// admitted.
//
// Other rules, as in envoyproxy/ratelimit: an unlimited rule is always OK
// and reports limit_remaining 4294967295; a rule whose rate_limit names other
// limits in replaces makes those limits (matched by their rate_limit name)
// not apply to the same request (an unlimited rule of that name stays
// unlimited); requests_per_unit 0 refuses every request that hits it (a
// block list), while a peek at it is OK with limit_remaining 0 until a
// request has hit its descriptor in the window (envoyproxy/ratelimit's
// counter is then above 0), which a one-unit record per window, as that of
// a fixed window that went over, remembers; a rule in shadow_mode is
// decided, counted and reported to observers, but its status is OK and it
// never makes a request OVER_LIMIT. An unknown domain or a descriptor that
// matches no rule is OK with no current_limit. Replaces is honoured from
// every matched rule, unlimited ones included, so an unlimited rule for a
// trusted client can lift a generic limit.
//
// A descriptor with is_negative_hits gives its cost back, as
// envoyproxy/ratelimit takes it off its window's counter: it is OK,
// refuses no request, and gives a fixed window back at most what the window
// counted. It gives nothing back to a fixed window that went over its
// limit, in its own request too (sluice did not count the refused hits
// that envoyproxy/ratelimit did), to other algorithms, and to
// requests_per_unit 0 rules. Its limit_remaining is what a peek after the
// give-back finds the window holds, so a
// give-back the store did not take (its clock more than half a window off
// the service's, the key's count reset or lost meanwhile) is not answered
// as given.
//
// A leaky-bucket rule with max_wait admits a request that does not fit yet
// when its turn comes within max_wait, and the service answers only then.
// A request whose turn comes after the call's deadline (the Envoy filter's
// timeout) is answered OVER_LIMIT at once, what it charged fixed and
// sliding windows given back (the queue's slot stays spent): set the
// filter's timeout above the longest max_wait for the queue to delay
// requests rather than refuse them.
//
// The store's own failure policy (sluice's failover wrappers) decides what
// happens when it cannot be reached; an error that still reaches the service
// is answered with gRPC code Unavailable, never as a decision. A status the
// policy decided without a store (sluice.Status.Unavailable: a failover's
// allow or deny) keeps its code but tells no remaining: no limit_remaining,
// no duration_until_reset but a Unix window's end, and no figure in the
// RateLimit headers, only the limit (see Outcome.Unavailable). Malformed
// requests are answered with InvalidArgument and a message saying what is
// wrong.
package envoy
