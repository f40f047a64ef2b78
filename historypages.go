package agentchat

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// followPages returns a History answer with the messages of its history pages
// (HistoryResult.Pages) read from ClientOptions.MessageStores (transfer.FollowPages:
// from h.Offset, at most limit when limit > 0). Without the chat's store the error is
// ErrStoredMessages naming the first page; a page missing or not matching its index
// is the HistoryPageUnreadable application error; both wrapped "agentchat: history of
// chat ...".
func (c *Client) followPages(ctx context.Context, chatID string, h HistoryResult, limit int) (HistoryResult, error) {
	out, err := transfer.FollowPages(ctx, transfer.PagesFrom(c.stores), chatID, h, limit)
	if err != nil {
		return HistoryResult{}, fmt.Errorf("agentchat: history of chat %q: %w", chatID, err)
	}
	return out, nil
}

// exportPages is the transfer.PageReader of the client's exports: what the client's
// stores cannot read (no such store, a row it cannot open or reach) is
// ErrStoredMessages, so that the export goes through the worker, which has its store
// and ring; a page missing or not matching its index (HistoryPageUnreadable) fails the
// export, as it would on the worker.
func (c *Client) exportPages(ctx context.Context, chatID, store string, refs []wire.PageRef, from int64, pages int) ([]chat.Message, error) {
	msgs, err := transfer.ReadPages(ctx, c.stores, store, chatID, refs, from, pages)
	var app *temporal.ApplicationError
	if err != nil && !errors.Is(err, ErrStoredMessages) && !errors.As(err, &app) {
		return nil, fmt.Errorf("%w (%v)", ErrStoredMessages, err)
	}
	return msgs, err
}
