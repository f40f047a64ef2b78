package agentchat

import (
	"context"

	"github.com/agentchat/agentchat/wire"
)

// Reencrypt asks a chat to continue as new at its next turn boundary (the Reencrypt
// signal), so that what it carries into its next run is encoded again by the worker's
// codec, with the ring's current key: after a key rotation, send it to every chat,
// then an old key can leave the ring once the chats' older runs are no longer read.
// Errors: ErrChatNotFound, ErrChatClosed.
func (c *Client) Reencrypt(ctx context.Context, chatID string) error {
	if err := c.tc.SignalWorkflow(ctx, chatID, "", wire.ReencryptSignal, nil); err != nil {
		return c.chatError(ctx, "re-encrypt", chatID, err)
	}
	return nil
}
