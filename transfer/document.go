package transfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/agentchat/agentchat/chat"
	"github.com/agentchat/agentchat/chatstate"
	"github.com/agentchat/agentchat/wire"
)

// ErrStoredMessages: the chat's older message bodies are in a message store the
// exporter cannot read.
var ErrStoredMessages = errors.New("the chat's older messages are in the worker's message store")

// Source says where a document is exported from: the Temporal namespace and the
// cluster name the exporting side calls itself.
type Source struct {
	Namespace string
	Cluster   string
}

// Filler fills stub messages (no contents) from a message store, returning msgs with
// their bodies (FillStubs does it from one store).
type Filler func(ctx context.Context, msgs []chat.Message) ([]chat.Message, error)

// BuildDocument reads a chat run through its ExportSnapshot and History queries and
// returns its chat-state document (without digest; chatstate.Encode adds it). The
// snapshot fixes a turn boundary, and only the history up to it is taken, so the
// document is consistent even while the chat takes turns. It works on finished chats
// too. An empty runID means the latest run: the run that answers the snapshot
// (wire.Snapshot.RunID) is then read to the end, even if the chat continues as new
// meanwhile, and the document's source names it. Stub messages (bodies in a message store)
// are filled by fill; with no fill, or what it cannot fill, the error is ErrStoredMessages.
// History pages (HistoryResult.Pages) are read by pages (FollowPages; nil:
// ErrStoredMessages naming the first page). A failed query is returned wrapped,
// "export <chat>: query <name>: ...".
func BuildDocument(ctx context.Context, tc client.Client, chatID, runID string, src Source, fill Filler, pages PageReader) (chatstate.Document, error) {
	var snap wire.Snapshot
	if err := query(ctx, tc, chatID, runID, wire.SnapshotQuery, &snap); err != nil {
		return chatstate.Document{}, err
	}
	if runID == "" { // the latest run answered: read the rest from it, and name it
		runID = snap.RunID
	}
	if fill == nil && snap.Stubbed {
		return chatstate.Document{}, fmt.Errorf("export %q: %w; export through the worker or give the client the store", chatID, ErrStoredMessages)
	}
	var stubsAt func([]chat.Message) int // with no fill, stop at the first stub (a chat that predates Stubbed)
	if fill == nil {
		stubsAt = func(page []chat.Message) int { return slices.IndexFunc(page, IsStub) }
	}
	history, err := readHistoryUntil(ctx, tc, chatID, runID, 0, snap.HistoryLength, pages, stubsAt)
	if err != nil {
		return chatstate.Document{}, err
	}
	if fill != nil {
		if history, err = fill(ctx, history); err != nil {
			return chatstate.Document{}, err
		}
	}
	if i := slices.IndexFunc(history, IsStub); i >= 0 {
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

// StreamDocument is BuildDocument without holding the history: it returns the
// document without its history (History nil) and a chatstate.History that reads it
// one History answer at a time (pages followed with pages, stubs filled by fill), to
// write with a chatstate.Encoder; the heap then holds one answer, not the chat. The
// History yields the messages up to the snapshot's turn boundary and may be read
// more than once (the queries are made again). Its errors are BuildDocument's: a stub
// fill does not fill (or any, with no fill) is ErrStoredMessages naming its index, a
// failed query is returned wrapped, fill's and pages' errors as they are.
func StreamDocument(ctx context.Context, tc client.Client, chatID, runID string, src Source, fill Filler, pages PageReader) (chatstate.Document, chatstate.History, error) {
	var snap wire.Snapshot
	if err := query(ctx, tc, chatID, runID, wire.SnapshotQuery, &snap); err != nil {
		return chatstate.Document{}, nil, err
	}
	if runID == "" { // the latest run answered: read the rest from it, and name it
		runID = snap.RunID
	}
	if fill == nil && snap.Stubbed {
		return chatstate.Document{}, nil, fmt.Errorf("export %q: %w; export through the worker or give the client the store", chatID, ErrStoredMessages)
	}
	history := func(yield func(chat.Message) error) error {
		for from := 0; from < snap.HistoryLength; {
			in := wire.HistoryInput{Offset: from, Limit: snap.HistoryLength - from, MaxBytes: wire.HistoryPageBytes}
			var page wire.HistoryResult
			if err := query(ctx, tc, chatID, runID, wire.HistoryQuery, &page, in); err != nil {
				return err
			}
			page, err := FollowPages(ctx, pages, chatID, page, in.Limit)
			if err != nil {
				return err
			}
			msgs := page.Messages[:min(len(page.Messages), in.Limit)]
			if len(msgs) == 0 {
				return fmt.Errorf("chat %q: history ended at %d of %d messages", chatID, from, snap.HistoryLength)
			}
			if fill != nil {
				if msgs, err = fill(ctx, msgs); err != nil {
					return err
				}
			}
			for i, m := range msgs {
				if IsStub(m) {
					return fmt.Errorf("export %q: %w (from message %d on); export through the worker or give the client the store",
						chatID, ErrStoredMessages, from+i)
				}
				if err := yield(m); err != nil {
					return err
				}
			}
			from += len(msgs)
		}
		return nil
	}
	return chatstate.Document{
		SchemaVersion: chatstate.SchemaVersion, ChatID: chatID, ExportedAt: time.Now().UTC(),
		Source:       chatstate.Source{Namespace: src.Namespace, WorkflowID: chatID, RunID: runID, Cluster: src.Cluster},
		Participants: snap.Participants, Channels: snap.Channels,
		Strategies: snap.Strategies, PendingTurns: snap.PendingTurns,
	}, history, nil
}

// ReadHistory reads messages [from, to) of a chat run through its History query, in
// pages of at most wire.HistoryPageBytes. Answers with history pages are read by pages
// (FollowPages; nil: ErrStoredMessages naming the first page), their stubs filled; the
// stubs of other answers are returned as they are. A history that ends before to is an
// error.
func ReadHistory(ctx context.Context, tc client.Client, chatID, runID string, from, to int, pages PageReader) ([]chat.Message, error) {
	return readHistoryUntil(ctx, tc, chatID, runID, from, to, pages, nil)
}

// readHistoryUntil is ReadHistory that stops after the page in which stop, if set,
// finds a message (returns its index in the page, or -1): what was read so far is
// returned, shorter than asked.
func readHistoryUntil(ctx context.Context, tc client.Client, chatID, runID string, from, to int, pages PageReader, stop func([]chat.Message) int) ([]chat.Message, error) {
	msgs := make([]chat.Message, 0, to-from)
	for from+len(msgs) < to {
		var page wire.HistoryResult
		// MaxBytes said, though it is the default: a chat run by a worker older than that
		// default would send the rest whole.
		in := wire.HistoryInput{Offset: from + len(msgs), Limit: to - from - len(msgs), MaxBytes: wire.HistoryPageBytes}
		if err := query(ctx, tc, chatID, runID, wire.HistoryQuery, &page, in); err != nil {
			return nil, err
		}
		page, err := FollowPages(ctx, pages, chatID, page, in.Limit)
		if err != nil {
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

func query(ctx context.Context, tc client.Client, chatID, runID, name string, out any, args ...any) error {
	v, err := tc.QueryWorkflow(ctx, chatID, runID, name, args...)
	if err != nil {
		return fmt.Errorf("export %q: query %s: %w", chatID, name, err)
	}
	return v.Get(out)
}
