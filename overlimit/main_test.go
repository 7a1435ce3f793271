package overlimit_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The package starts no goroutine: every test, its stores closed, leaves
// none behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
