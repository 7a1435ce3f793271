// Package sluice decides whether work may proceed under rate limits, exactly,
// in one process or across many sharing a store.
//
// A Limit is a promise about one key: at most Quantity units per Window, in
// the sense of its Algorithm — per aligned window (fixed window), in every
// window of that length (sliding log), by Cloudflare's weighted estimate of
// the last window (sliding counter), a bucket of Burst units refilled at
// Quantity per Window (token bucket, GCRA, leaky bucket as a meter or as a
// queue that delays instead of refusing), or at most Quantity units in
// flight at once (concurrency). A Check asks to spend Cost units of one
// Limit for one Key; Cost 0 only looks.
//
// A Limiter decides a call of several checks — say per-second, per-minute
// and per-day for one client, and a global limit for everyone — as one
// unit: all are admitted together, or none is and nothing is spent; a
// refusal names every limit that refused and the exact wait (RetryAfter)
// after which the same call passes if nothing else arrives. Remaining never
// goes below zero nor above the limit's Burst. A concurrency lease is given
// back with Limiter.Release when the work ends.
//
// Time is an integer number of microseconds since Epoch, read from the
// Store's clock (Redis's own for the Redis store), never from the caller's;
// windows are aligned to Epoch, or are the days, weeks, months or years of
// the calendar for a limit built by Calendar. The algorithms use integer arithmetic only:
// rates that do not divide evenly stay exact, huge values saturate, and a
// clock that steps back creates no capacity.
//
// An error is never a decision. Limiter.Allow returns one when it decided
// nothing — an invalid check (ErrInvalidCheck) or a store that could not be
// reached (ErrStoreUnavailable) — and then nothing was spent; what to do
// instead (admit, refuse, decide locally) is the caller's choice, which
// package failover makes by rule.
//
// State lives in a Store: package memory (in process) and package redis
// (shared by every instance; standalone, Sentinel or Cluster) decide the
// same sequence of calls identically. Packages failover and overlimit wrap
// a Store; httplimit, grpclimit and envoy put a Limiter in front of
// net/http handlers, gRPC services and Envoy. A Store of one's own keeps a
// State per key and limit and decides with DecideBatch (see Store).
package sluice
