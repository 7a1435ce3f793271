// Package switchover holds the tests of sluice's Redis store across a
// change of Redis master — a Sentinel master killed or failed over on
// purpose, a Cluster master killed or failed over, slots moved under load —
// with two instances deciding one limit and clients counting, from the
// outside, what was admitted in every window. RELIABILITY.md records what
// they measured. It has no code of its own: it is a package so that its
// tests run in parallel with the others of `make test`.
package switchover
