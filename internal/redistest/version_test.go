package redistest

import "testing"

// redisMajor reads redis-server --version's major version, so that a
// machine with Redis 6 fails the Redis tests with a message saying why,
// not with a script's "unknown command" deep in a test.
func TestRedisMajorReadsTheVersionLine(t *testing.T) {
	for _, c := range []struct {
		in    string
		major int
		ok    bool
	}{
		{"Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d7c971a948f0\n", 7, true},
		{"Redis server v=6.2.6 sha=00000000:0 malloc=jemalloc-5.1.0 bits=64 build=9c9e426e2f96cc51", 6, true},
		{"Redis server v=10.1.0 sha=0", 10, true},
		{"redis-server: command not understood", 0, false},
		{"Redis server v=x.y", 0, false},
	} {
		major, ok := redisMajor(c.in)
		if major != c.major || ok != c.ok {
			t.Errorf("redisMajor(%q) = %d, %v; want %d, %v", c.in, major, ok, c.major, c.ok)
		}
	}
}
