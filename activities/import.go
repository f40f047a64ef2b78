package activities

import (
	"context"
	"encoding/json"
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/agents"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/workflows"
)

// importPageBytes bounds the messages of one ImportPage: well under the 2 MB payload limit.
const importPageBytes = 1 << 20

// ImportChat reads a document (inline or from the store), validates, repairs and
// upgrades it (chatstate.Decode), and returns the messages from in.Offset on, at most
// about 1 MiB of them; the first page carries the header. Errors: InvalidDocument
// naming the field, not retried; an unreadable store is retried.
func (a *Activities) ImportChat(ctx context.Context, in workflows.ImportPageInput) (workflows.ImportPage, error) {
	b := []byte(in.Source.Document)
	if in.Source.URI != "" {
		var err error
		if b, err = a.store.Get(ctx, in.Source.URI); err != nil {
			return workflows.ImportPage{}, err
		}
	}
	doc, report, err := chatstate.Decode(b)
	if err != nil {
		return workflows.ImportPage{}, InvalidDocument(err)
	}
	page := workflows.ImportPage{Total: len(doc.History)}
	if in.Offset == 0 {
		header := doc
		header.History = nil
		page.Header, page.Repairs = &header, report.Repairs
	}
	size := 0
	for i := in.Offset; i < len(doc.History) && (size < importPageBytes || i == in.Offset); i++ {
		m := doc.History[i]
		b, err := json.Marshal(m)
		if err != nil {
			return workflows.ImportPage{}, InvalidDocument(err)
		}
		size += len(b)
		if size > importPageBytes && i > in.Offset {
			break
		}
		page.Messages = append(page.Messages, m)
	}
	return page, nil
}

// InvalidDocument wraps a document error as the non-retryable InvalidDocument error.
func InvalidDocument(err error) error {
	var fe *chatstate.FieldError
	msg := err.Error()
	if errors.As(err, &fe) {
		msg = fe.Error()
	}
	return temporal.NewNonRetryableApplicationError(msg, agents.ErrTypeInvalidDocument, nil)
}
