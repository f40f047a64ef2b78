package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// ExportChat builds the document of the calling chat run from its ExportSnapshot and
// History queries (so the chat's messages never pass through an activity input) and
// writes it to the requested sink: inline (at most wire.InlineLimit bytes), the
// worker's document store, or a file path on the worker. Errors: InvalidInput for an
// inline document that is too large or a bad path.
func (a *Activities) ExportChat(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
	defer heartbeatWhileWaiting(ctx)() // queries, the message store, encoding and the sink may each be slow
	ns := activity.GetInfo(ctx).WorkflowNamespace
	tc, err := a.temporal(ns)
	if err != nil {
		return wire.ExportResult{}, err
	}
	fill := func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error) {
		return a.fillStubs(ctx, in.ChatID, in.Store, msgs)
	}
	doc, err := transfer.BuildDocument(ctx, tc, in.ChatID, in.RunID, transfer.Source{Namespace: ns, Cluster: a.clusterName}, fill, a.readPages)
	if err != nil {
		return wire.ExportResult{}, err
	}
	b, digest, err := chatstate.Encode(doc)
	if err != nil {
		return wire.ExportResult{}, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
	}
	res := wire.ExportResult{Digest: digest, Bytes: len(b), MessageCount: len(doc.History)}
	for _, m := range doc.PendingTurns {
		res.PendingTurns = append(res.PendingTurns, m.MessageID)
	}
	sink := in.Export.Sink
	// Inline documents travel in payloads (the codec encrypts those): signed only.
	inline, err := envelope.Seal(b, digest, envelope.Options{Signer: a.docs.Signer})
	if err != nil {
		return wire.ExportResult{}, err
	}
	if sink == "" || sink == wire.SinkAuto {
		sink = wire.SinkInline
		if len(inline) > wire.InlineLimit {
			sink = wire.SinkStore
		}
	}
	if sink != wire.SinkInline {
		if b, err = envelope.Seal(b, digest, a.docs); err != nil {
			return wire.ExportResult{}, err
		}
	}
	switch sink {
	case wire.SinkInline:
		if len(inline) > wire.InlineLimit {
			return wire.ExportResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"export: the document is %d bytes, over the %d inline limit; use sink \"store\" or \"file\"", len(inline), wire.InlineLimit),
				wire.ErrTypeInvalidInput, nil)
		}
		res.Document = inline
	case wire.SinkStore:
		name := fmt.Sprintf("%s-%s.json", safeName(in.ChatID), digest[len("sha256:"):][:16])
		if res.URI, err = a.store.Put(ctx, name, b); err != nil {
			return wire.ExportResult{}, err
		}
	case wire.SinkFile:
		if err := writeFileAtomic(in.Export.Path, b); err != nil {
			return wire.ExportResult{}, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidInput, nil)
		}
		res.URI = transfer.FileURI(in.Export.Path)
	}
	return res, nil
}

func safeName(id string) string {
	b := []byte(id)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}
