package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
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
	doc, err := BuildDocument(ctx, tc, in.ChatID, in.RunID, Source{Namespace: ns, Cluster: a.clusterName}, fill)
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
	if sink == "" || sink == wire.SinkAuto {
		sink = wire.SinkInline
		if len(b) > wire.InlineLimit {
			sink = wire.SinkStore
		}
	}
	switch sink {
	case wire.SinkInline:
		if len(b) > wire.InlineLimit {
			return wire.ExportResult{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
				"export: the document is %d bytes, over the %d inline limit; use sink \"store\" or \"file\"", len(b), wire.InlineLimit),
				wire.ErrTypeInvalidInput, nil)
		}
		res.Document = b
	case wire.SinkStore:
		name := fmt.Sprintf("%s-%s.json", safeName(in.ChatID), digest[len("sha256:"):][:16])
		if res.URI, err = a.store.Put(ctx, name, b); err != nil {
			return wire.ExportResult{}, err
		}
	case wire.SinkFile:
		if err := writeFileAtomic(in.Export.Path, b); err != nil {
			return wire.ExportResult{}, temporal.NewNonRetryableApplicationError("export: "+err.Error(), wire.ErrTypeInvalidInput, nil)
		}
		res.URI = FileURI(in.Export.Path)
	}
	return res, nil
}

// Source says where a document is exported from: the Temporal namespace and the
// cluster name the exporting side calls itself.
type Source struct {
	Namespace string
	Cluster   string
}

// BuildDocument reads a chat run through its ExportSnapshot and History queries and
// returns its chat-state document (without digest; chatstate.Encode adds it). The
// snapshot fixes a turn boundary, and only the history up to it is taken, so the
// document is consistent even while the chat takes turns. It works on finished chats
// too. An empty runID means the latest run. Stub messages (bodies in a message store)
// are filled by fill; with no fill, or what it cannot fill, the error is ErrStoredMessages.
func BuildDocument(ctx context.Context, tc client.Client, chatID, runID string, src Source, fill Filler) (chatstate.Document, error) {
	var snap wire.Snapshot
	if err := query(ctx, tc, chatID, runID, wire.SnapshotQuery, &snap); err != nil {
		return chatstate.Document{}, err
	}
	if fill == nil && snap.Stubbed {
		return chatstate.Document{}, fmt.Errorf("export %q: %w; export through the worker or give the client the store", chatID, ErrStoredMessages)
	}
	var stubsAt func([]chat.Message) int // with no fill, stop at the first stub (a chat that predates Stubbed)
	if fill == nil {
		stubsAt = func(page []chat.Message) int { return slices.IndexFunc(page, isStub) }
	}
	history, err := readHistoryUntil(ctx, tc, chatID, runID, 0, snap.HistoryLength, stubsAt)
	if err != nil {
		return chatstate.Document{}, err
	}
	if fill != nil {
		if history, err = fill(ctx, history); err != nil {
			return chatstate.Document{}, err
		}
	}
	if i := slices.IndexFunc(history, isStub); i >= 0 {
		return chatstate.Document{}, fmt.Errorf("export %q: %w (from message %d on); export through the worker or give the client the store",
			chatID, ErrStoredMessages, i)
	}
	return chatstate.Document{
		SchemaVersion: chatstate.SchemaVersion, ChatID: chatID, ExportedAt: time.Now().UTC(),
		Source:  chatstate.Source{Namespace: src.Namespace, WorkflowID: chatID, RunID: runID, Cluster: src.Cluster},
		History: history[:snap.HistoryLength], Participants: snap.Participants, Channels: snap.Channels,
		Strategies: snap.Strategies, PendingTurns: snap.PendingTurns,
	}, nil
}

// readHistory reads messages [from, to) of a chat run through its History query, in
// pages of at most wire.HistoryPageBytes.
func readHistory(ctx context.Context, tc client.Client, chatID, runID string, from, to int) ([]chat.Message, error) {
	return readHistoryUntil(ctx, tc, chatID, runID, from, to, nil)
}

// readHistoryUntil is readHistory that stops after the page in which stop, if set,
// finds a message (returns its index in the page, or -1): what was read so far is
// returned, shorter than asked.
func readHistoryUntil(ctx context.Context, tc client.Client, chatID, runID string, from, to int, stop func([]chat.Message) int) ([]chat.Message, error) {
	msgs := make([]chat.Message, 0, to-from)
	for from+len(msgs) < to {
		var page wire.HistoryResult
		// MaxBytes said, though it is the default: a chat run by a worker older than that
		// default would send the rest whole.
		in := wire.HistoryInput{Offset: from + len(msgs), Limit: to - from - len(msgs), MaxBytes: wire.HistoryPageBytes}
		if err := query(ctx, tc, chatID, runID, wire.HistoryQuery, &page, in); err != nil {
			return nil, err
		}
		if len(page.Messages) == 0 {
			return nil, fmt.Errorf("chat %q: history ended at %d of %d messages", chatID, from+len(msgs), to)
		}
		msgs = append(msgs, page.Messages...)
		if stop != nil && stop(page.Messages) >= 0 {
			break
		}
	}
	return msgs, nil
}

// ErrStoredMessages: the chat's older message bodies are in a message store the
// exporter cannot read.
var ErrStoredMessages = errors.New("the chat's older messages are in the worker's message store")

// Filler fills stub messages (no contents) from a message store.
type Filler func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error)

func query(ctx context.Context, tc client.Client, chatID, runID, name string, out any, args ...any) error {
	v, err := tc.QueryWorkflow(ctx, chatID, runID, name, args...)
	if err != nil {
		return fmt.Errorf("export %q: query %s: %w", chatID, name, err)
	}
	return v.Get(out)
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
