package checkjson

import (
	"testing"

	"github.com/sluice-dev/sluice/client"
)

// Pins AppendResponse's contract (its doc comment and the package's: it
// writes byte for byte what json.Encoder writes): a LimitStatus's
// retryAfterMs is `omitempty`, so encoding/json leaves out only 0 and
// writes any other value, a negative one included. Expected by hand from the
// JSON tags of client.CheckResponse and client.LimitStatus.
func TestALimitsNonZeroRetryAfterMsIsWrittenWhateverItsSign(t *testing.T) {
	for _, c := range []struct {
		ms   int64
		want string
	}{
		{-5, `,"retryAfterMs":-5}]}`},
		{0, `}]}`},
		{7, `,"retryAfterMs":7}]}`},
	} {
		r := client.CheckResponse{Limits: []client.LimitStatus{{Name: "l", RetryAfterMs: c.ms}}}
		want := `{"allowed":false,"identity":"","cost":0,"remaining":0,"resetAfterMs":0,"limits":[` +
			`{"name":"l","algorithm":"","quantity":0,"window":"","burst":0,"allowed":false,"remaining":0,"resetAfterMs":0` +
			c.want + "\n"
		if got := string(AppendResponse(nil, &r, new([]string))); got != want {
			t.Errorf("retryAfterMs %d:\ngot  %s\nwant %s", c.ms, got, want)
		}
	}
}
