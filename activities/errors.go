package activities

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/wire"
)

// providerError turns an error from a model call into a Temporal application error.
// Retryability follows the HTTP status only: 408, 409, 429 and 5xx, and failures with
// no status (network, stream cut), are retryable (type ModelUnavailable) with the
// provider's Retry-After as the next delay; any other 4xx is not (type
// ModelRequestRejected) and carries the provider's message for the caller.
func providerError(ctx context.Context, err error, retryAfter time.Duration) error {
	status, msg := statusOf(err)
	if status == 0 && ctx.Err() != nil {
		// The activity's own deadline or cancellation: let Temporal see it as such.
		return redactError(err)
	}
	text := "model endpoint"
	if status != 0 {
		text += fmt.Sprintf(" answered %d %s", status, http.StatusText(status))
	} else {
		text += " unreachable"
	}
	if msg != "" {
		text += ": " + msg
	}
	text = redactSecrets(text)
	if status != 0 && !retryableStatus(status) {
		return temporal.NewNonRetryableApplicationError(text, wire.ErrTypeModelRejected, nil)
	}
	return temporal.NewApplicationErrorWithOptions(text, wire.ErrTypeModelUnavailable,
		temporal.ApplicationErrorOptions{NextRetryDelay: retryAfter})
}

func retryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// statusOf returns the HTTP status and the provider's message of a go-openai error;
// status 0 when the call got no HTTP answer. A body that is no JSON error is quoted
// redacted and cut to maxBodyBytes.
func statusOf(err error) (int, string) {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return apiErr.HTTPStatusCode, apiErr.Message
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		msg := strings.TrimSpace(string(reqErr.Body))
		if msg == "" && reqErr.Err != nil {
			msg = reqErr.Err.Error()
		}
		return reqErr.HTTPStatusCode, cut(redactSecrets(msg), maxBodyBytes)
	}
	return 0, err.Error()
}

// maxBodyBytes bounds the part of a provider's error body an error quotes.
const maxBodyBytes = 500

// cut returns s up to n bytes, ending between characters, with "…" when cut: the text
// becomes a failure message, a protobuf string, which must be valid UTF-8. Redact
// before cutting, or a secret across the cut keeps its first part.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// notFound reports whether err is a model service's 404, whatever its body
// (statusOf).
func notFound(err error) bool {
	status, _ := statusOf(err)
	return status == http.StatusNotFound
}

// threadLost is the non-retryable ServiceThreadLost error for the conversation of a
// service-thread channel that the service no longer knows (an Assistants thread, a
// Responses chain: what names it), answered err at where; the workflow then sends the
// agent the chat's history again (workflows/threadlost.go).
func threadLost(where, what string, err error) error {
	_, msg := statusOf(err)
	if msg == "" {
		msg = err.Error()
	}
	return temporal.NewNonRetryableApplicationError(redactSecrets(fmt.Sprintf(
		"%s: the service no longer knows this %s (another project, deleted, or past its retention): %s", where, what, msg)),
		wire.ErrTypeThreadLost, nil)
}
