package activities

import (
	"errors"
	"regexp"
	"strings"
	"sync"

	"go.temporal.io/sdk/temporal"
)

// Redacted replaces a secret in error texts.
const Redacted = "[redacted]"

// secretPattern finds API keys by their look: OpenAI-style "sk-…" keys (sk-proj-…,
// sk-svcacct-…), and bearer tokens.
var secretPattern = regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{6,}|(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{6,}`)

// minSecretLen is the shortest configured key value redacted by value: shorter ones
// would blank ordinary words.
const minSecretLen = 8

// secrets holds the API key values every Activities of this process was configured
// with (New adds them: the endpoints' keys, and the values an MCP server's env and
// headersEnv name): more redaction is never wrong.
var secrets struct {
	mu     sync.RWMutex
	values map[string]bool
}

// addSecret makes redactSecrets hide v from now on, and the credential of v alone
// when v is a header value with a scheme ("Token abc…", "Bearer abc…"), as a server
// may quote either.
func addSecret(v string) {
	v = strings.TrimSpace(v)
	if len(v) < minSecretLen {
		return
	}
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	if secrets.values == nil {
		secrets.values = map[string]bool{}
	}
	secrets.values[v] = true
	if _, cred, ok := strings.Cut(v, " "); ok {
		if cred = strings.TrimSpace(cred); len(cred) >= minSecretLen {
			secrets.values[cred] = true
		}
	}
}

// redactSecrets returns s with every configured key value and every key-like pattern
// replaced by Redacted. Provider error bodies pass through it before they become an
// error, a State lastError, a log line or a history event.
func redactSecrets(s string) string {
	secrets.mu.RLock()
	for v := range secrets.values {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	secrets.mu.RUnlock()
	return secretPattern.ReplaceAllString(s, Redacted)
}

// redactError returns err with its message redacted (redactSecrets); an application
// error keeps its type, retryability and next retry delay. An error with nothing to
// hide is returned as it is.
func redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := redactSecrets(msg)
	if clean == msg {
		return err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return temporal.NewApplicationErrorWithOptions(redactSecrets(app.Message()), app.Type(),
			temporal.ApplicationErrorOptions{NonRetryable: app.NonRetryable(), NextRetryDelay: app.NextRetryDelay()})
	}
	return errors.New(clean)
}
