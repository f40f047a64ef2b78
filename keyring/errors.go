package keyring

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotAuthentic is returned by Open for ciphertext that does not authenticate:
// tampered, truncated, or sealed under another key or context.
var ErrNotAuthentic = errors.New("keyring: ciphertext does not authenticate: tampered, truncated or sealed by another key")

// UnknownKeyError is returned by Open for a key id the ring does not hold.
type UnknownKeyError struct {
	KeyID string
	Known []string
}

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("keyring: unknown encryption key id %q (this ring holds %s): add that key to the ring (AGENTCHAT_KEYS)",
		e.KeyID, strings.Join(e.Known, ", "))
}
