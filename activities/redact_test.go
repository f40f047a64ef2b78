package activities

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

func TestRedactSecretsByPatternAndValue(t *testing.T) {
	addSecret("plain-value-0123456789")
	addSecret("short") // too short to redact by value
	for in, want := range map[string]string{
		"Incorrect API key provided: sk-proj-abcDEF123456.":    "Incorrect API key provided: [redacted].",
		"auth: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig failed": "auth: [redacted] failed",
		"key plain-value-0123456789 refused":                   "key [redacted] refused",
		"a short word stays":                                   "a short word stays",
		"sk-1 is too short to be a key":                        "sk-1 is too short to be a key",
	} {
		assert.Equal(t, want, redactSecrets(in), in)
	}
}

func TestRedactErrorKeepsTheApplicationErrorsShape(t *testing.T) {
	err := temporal.NewApplicationErrorWithOptions("echo sk-live-0123456789abcdef", "ModelUnavailable",
		temporal.ApplicationErrorOptions{NextRetryDelay: 3 * time.Second})
	got := redactError(err)
	var app *temporal.ApplicationError
	require.True(t, errors.As(got, &app))
	assert.Equal(t, "echo [redacted]", app.Message())
	assert.Equal(t, "ModelUnavailable", app.Type())
	assert.Equal(t, 3*time.Second, app.NextRetryDelay())
	assert.False(t, app.NonRetryable())

	plain := errors.New("nothing secret")
	assert.Same(t, plain, redactError(plain), "an error with nothing to hide is kept")
	assert.Equal(t, "x [redacted]", redactError(errors.New("x sk-abcdefghijkl")).Error())
	assert.Nil(t, redactError(nil))
}

// A long provider body is cut to its first 500 bytes after redaction, not before: a
// configured key across the cut would otherwise leave its first part unredacted.
func TestProviderErrorRedactsBeforeCuttingALongBody(t *testing.T) {
	const key = "azure-key-0123456789-DISTINCT-abcdef" // configured by value, no sk- look
	addSecret(key)
	for _, at := range []int{470, 490, 499} {
		body := strings.Repeat("x", at) + key + strings.Repeat("y", 100)
		err := providerError(context.Background(), &openai.RequestError{HTTPStatusCode: 400, Body: []byte(body)}, 0)
		assert.NotContains(t, err.Error(), key[:10], "key at byte %d", at)
		assert.Contains(t, err.Error(), "…", "still cut")
	}
}

// The cut falls between characters: a failure's message is a protobuf string, which
// must be valid UTF-8.
func TestProviderErrorCutsALongBodyBetweenCharacters(t *testing.T) {
	body := strings.Repeat("x", 499) + strings.Repeat("é", 100)
	err := providerError(context.Background(), &openai.RequestError{HTTPStatusCode: 400, Body: []byte(body)}, 0)
	assert.True(t, utf8.ValidString(err.Error()), "%q", err.Error())
	assert.Contains(t, err.Error(), "…")
}
