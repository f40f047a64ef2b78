package chat

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// Channel types: how an agent kind adapts the primary history (DESIGN.md, "Each agent
// kind has a channel").
const (
	// ChannelChatHistory is the channel of chat-completion agents: a local, possibly
	// reduced, copy of the primary history. Its state holds only reducer state.
	ChannelChatHistory = "chat_history"
)

// ChannelKey returns the key of the channel identified by parts:
// base64(SHA-256(UTF-8 of parts joined by ":")), standard encoding with padding, as
// chat-state-v1.md specifies. Parts must be stable strings (channel type, reducer
// settings, endpoint identity), so the same agent gives the same key in any process.
func ChannelKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, ":")))
	return base64.StdEncoding.EncodeToString(sum[:])
}
