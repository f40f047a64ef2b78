package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/envelope"
	"github.com/agentchat/agentchat/internal/idspill"
	"github.com/agentchat/agentchat/transfer"
	"github.com/agentchat/agentchat/wire"
)

// ExportChat implements Activities.ExportChat.
func (tr *transfers) ExportChat(ctx context.Context, in wire.ExportChatInput) (wire.ExportResult, error) {
	defer heartbeatWhileWaiting(ctx)() // queries, the message store, encoding and the sink may each be slow
	ns := activity.GetInfo(ctx).WorkflowNamespace
	tc, err := tr.clients.temporal(ns)
	if err != nil {
		return wire.ExportResult{}, err
	}
	fill := func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error) {
		return tr.stores.fillStubs(ctx, in.ChatID, in.Store, msgs)
	}
	if w, err := tr.exportWriter(ctx, in.Export); w != nil || err != nil {
		if err != nil {
			return wire.ExportResult{}, err
		}
		return tr.exportStreamed(ctx, tc, in, fill, w)
	}
	doc, err := transfer.BuildDocument(ctx, tc, in.ChatID, in.RunID, transfer.Source{Namespace: ns, Cluster: tr.clusterName}, fill, tr.stores.readPages)
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
	inline, err := envelope.Seal(b, digest, envelope.Options{Signer: tr.docs.Signer})
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
		if b, err = envelope.Seal(b, digest, tr.docs); err != nil {
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
		if res.URI, err = tr.store.Put(ctx, name, b); err != nil {
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

// exportWriter returns where ExportChat writes a document as it reads the chat
// (exportStreamed), or nil when it must build it whole: an inline sink, documents
// sealed (an envelope is made of the whole document: envelope.Seal), or a store that
// is not a DocumentCreator. A file the worker cannot create is InvalidInput.
func (tr *transfers) exportWriter(ctx context.Context, out wire.ExportInput) (DocumentWriter, error) {
	if out.Sink == wire.SinkInline || tr.docs.Ring != nil || tr.docs.Signer != nil {
		return nil, nil
	}
	if out.Sink == wire.SinkFile {
		w, err := newTempDocument(filepath.Dir(out.Path), func(string) (string, error) { return out.Path, nil })
		if err != nil {
			return nil, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidInput, nil)
		}
		return w, nil
	}
	creator, ok := tr.store.(DocumentCreator)
	if !ok {
		return nil, nil
	}
	return creator.Create(ctx)
}

// exportStreamed is ExportChat writing the document to w with a chatstate.Encoder as
// it reads the chat's history, one History answer at a time (transfer.StreamDocument),
// so that the worker holds one answer, never the whole history. The sink is the
// store, a file, or auto: a document that turns out small enough goes inline then, as
// ExportChat sends it. Errors as ExportChat's.
func (tr *transfers) exportStreamed(ctx context.Context, tc client.Client, in wire.ExportChatInput, fill transfer.Filler, w DocumentWriter) (wire.ExportResult, error) {
	defer w.Abort()
	ns := activity.GetInfo(ctx).WorkflowNamespace
	doc, history, err := transfer.StreamDocument(ctx, tc, in.ChatID, in.RunID, transfer.Source{Namespace: ns, Cluster: tr.clusterName}, fill, tr.stores.readPages)
	if err != nil {
		return wire.ExportResult{}, err
	}
	var count int
	var readErr error // the history's own error, returned as it is (a query's, the store's)
	counted := func(yield func(chat.Message) error) error {
		readErr = history(func(m chat.Message) error { count++; return yield(m) })
		return readErr
	}
	n, digest, err := chatstate.NewEncoder(w).SpillIDs(idspill.Opener("")).Encode(doc, counted)
	if readErr != nil {
		return wire.ExportResult{}, readErr
	}
	if err != nil {
		var fe *chatstate.FieldError
		if !errors.As(err, &fe) {
			return wire.ExportResult{}, fmt.Errorf("export: %w", err) // writing the file: retried
		}
		return wire.ExportResult{}, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidDocument, nil)
	}
	res := wire.ExportResult{Digest: digest, Bytes: int(n), MessageCount: count}
	for _, m := range doc.PendingTurns {
		res.PendingTurns = append(res.PendingTurns, m.MessageID)
	}
	if (in.Export.Sink == "" || in.Export.Sink == wire.SinkAuto) && n <= wire.InlineLimit {
		res.Document = make([]byte, n)
		if _, err := w.ReadAt(res.Document, 0); err != nil {
			return wire.ExportResult{}, fmt.Errorf("export: reading the document back: %w", err)
		}
		return res, nil
	}
	name := fmt.Sprintf("%s-%s.json", safeName(in.ChatID), digest[len("sha256:"):][:16])
	if res.URI, err = w.Commit(name); err != nil {
		if in.Export.Sink == wire.SinkFile {
			return wire.ExportResult{}, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidInput, nil)
		}
		return wire.ExportResult{}, err
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
