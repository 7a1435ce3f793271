package checkjson

import (
	"testing"

	"github.com/sluice-dev/sluice/client"
)

// Pins Text's and DecodeStrict's contract (their doc comments): a
// \uD800–\uDBFF escape is text only when a \uDC00–\uDFFF escape follows it.
// A high surrogate followed by an escape above the low surrogates (\uE000,
// \uFFFF) is no pair: encoding/json reads it as U+FFFD and the escape after
// it, so "\uD800\uE000" and "\uD801\uE000" would name one client.
func TestAHighSurrogateBeforeAnEscapeAboveTheLowSurrogatesIsNotText(t *testing.T) {
	for _, s := range []string{`\uD800\uE000`, `\uDBFF\uFFFF`, `a\uD83D\uE001b`} {
		body := []byte(`{"subject":"` + s + `"}`)
		if err := Text(body); err == nil {
			t.Errorf("Text(%s) = nil, want an error: no surrogate pair", body)
		}
		var req client.CheckRequest
		if err := DecodeStrict(body, &req); err == nil {
			t.Errorf("DecodeStrict(%s) = nil (subject %q), want an error", body, req.Subject)
		}
	}
	// The pairs' bounds themselves are text.
	for _, s := range []string{`\uD800\uDC00`, `\uDBFF\uDFFF`} {
		if err := Text([]byte(`{"subject":"` + s + `"}`)); err != nil {
			t.Errorf("Text of %s: %v, want nil: a surrogate pair", s, err)
		}
	}
}
