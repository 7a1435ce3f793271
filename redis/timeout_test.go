package redis

import "time"

// testTimeout bounds each call of the tests that are not about timeouts:
// under the race detector, on a machine shared with other work, a call
// queued behind others can take seconds without anything being wrong.
const testTimeout = 10 * time.Second
