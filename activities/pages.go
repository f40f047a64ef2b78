package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// readPages is the transfer.PageReader of this worker: it reads the history pages of a
// History answer from the worker's message stores (store "" is the default one),
// checked and with their stubs filled (transfer.ReadPages). A page missing or not
// matching its index is returned as ReadPages makes it (HistoryPageUnreadable, not
// retried); the store's errors as storeError makes them (StoreUnavailable retried; the
// rest, a store this worker lacks among them, not).
func (a *Activities) readPages(ctx context.Context, chatID, store string, refs []wire.PageRef) ([]chat.Message, error) {
	if store == "" {
		store = a.defaultStore
	}
	msgs, err := transfer.ReadPages(ctx, a.stores, store, chatID, refs)
	var app *temporal.ApplicationError
	if err != nil && !errors.As(err, &app) {
		return nil, storeError(err)
	}
	return msgs, err
}
