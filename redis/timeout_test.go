package redis

import "time"

// testTimeout bounds each call of the tests that are not about timeouts:
// under the race detector, on a machine shared with other work, a call
// can take longer than DefaultTimeout without anything being wrong.
const testTimeout = time.Second
