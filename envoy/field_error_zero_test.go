package envoy_test

import (
	"testing"

	"github.com/sluice-dev/sluice/envoy"
)

// The zero FieldError, whose Err is nil, says "invalid" (every type's zero
// value is safe).
func TestTheZeroFieldErrorSaysInvalid(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("(zero envoy.FieldError).Error() panicked: %v", r)
		}
	}()
	var e envoy.FieldError
	_ = e.Error()
}
